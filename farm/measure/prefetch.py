"""Have the kernel read the GPU libraries a worker loads first into the page cache, in the background.

On a machine that has not loaded them since it booted, a worker's first cell spends seconds reading them
from disk (cuBLASLt alone is over 500 MB; about 2.5 s of a fresh H100's first cell). A sweep that starts its
own Ray on this machine asks for them while Ray starts, which takes longer.
"""

from __future__ import annotations

import os
import threading

# What a worker loads before its first row: the vendor baselines' libraries and the run-time compiler.
LIBRARIES = ("cublasLt", "cublas", "nvrtc")


def _read_ahead(names: tuple[str, ...]) -> None:
    try:
        from cuda import pathfinder  # nvmath-python's finder: the files the baselines will load
    except ImportError:
        return
    for name in names:
        try:
            path = pathfinder.load_nvidia_dynamic_lib(name).abs_path
            fd = os.open(path, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
            finally:
                os.close(fd)
        except Exception:  # noqa: BLE001 - a library not here is the worker's to report, in its rows
            continue


def prefetch_libraries(names: tuple[str, ...] = LIBRARIES) -> threading.Thread:
    """Start reading `names` into the page cache on a daemon thread (nothing is loaded onto a GPU); the thread."""
    thread = threading.Thread(target=_read_ahead, args=(names,), name="prefetch-gpu-libraries", daemon=True)
    thread.start()
    return thread
