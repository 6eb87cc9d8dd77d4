"""Shared fixtures; GPU tests (marker `gpu`) skip cleanly where no NVIDIA GPU is usable."""

import functools
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


@functools.lru_cache(maxsize=1)
def gpu_unavailable_reason() -> str | None:
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA device"
    except Exception as exc:  # noqa: BLE001 - any failure to reach a GPU means: skip
        return f"no usable GPU ({type(exc).__name__}: {str(exc)[:80]})"
    return None


def pytest_collection_modifyitems(config, items):
    reason = gpu_unavailable_reason() if any("gpu" in item.keywords for item in items) else None
    if reason:
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(autouse=True)
def _private_cubin_cache(tmp_path_factory, monkeypatch):
    # One cache per test session: tests never read CUBINs another checkout compiled.
    monkeypatch.setenv("GEMM_FARM_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
    yield


_EXIT_STATUS = pytest.StashKey[int]()


def pytest_sessionfinish(session, exitstatus):
    session.config.stash[_EXIT_STATUS] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    # Ray's native threads (gRPC pollers, the core worker's io threads) outlive ray.shutdown(), and the interpreter's
    # finalisation can race them: CI once died of SIGSEGV after every test had passed (the same race between Ray
    # sessions in one process: ray-project/ray#31145). Where Ray ran here, leave with pytest's status, reports written,
    # without finalising the interpreter.
    if "ray" in sys.modules and _EXIT_STATUS in config.stash:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(config.stash[_EXIT_STATUS])
