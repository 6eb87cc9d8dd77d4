"""Programmatic dependent launch (Launch.dependent): a kernel launched through the driver's cuLaunchKernelEx with
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, which lets it start while the kernel before it in the stream is
still finishing (its blocks run their setup, then wait in griddepcontrol.wait until that kernel has completed and its
memory is visible). CuPy's RawKernel launch takes no launch attributes, so such a launch packs its own arguments as
the kernel parameter array (void* per argument) the driver reads: 32-bit ints, device pointers, and tensor maps (a
NumPy record of 128 bytes, farm/measure/tma.py) by value. A stream capture records the attribute as a programmatic
edge of the graph (CUDA 12.3 and later).
"""

from __future__ import annotations

import numpy as np


def packed_arguments(args) -> tuple[list[np.ndarray], np.ndarray]:
    """(buffers, pointers): a buffer holding each argument's bytes, and the array of their addresses (kernelParams).
    The buffers must outlive every launch that uses the pointers."""
    buffers = []
    for value in args:
        if isinstance(value, np.void):  # a tensor map, by value
            buffers.append(np.frombuffer(value.tobytes(), dtype=np.uint8).copy())
        elif hasattr(value, "data") and hasattr(value.data, "ptr"):  # a CuPy array: its device address
            buffers.append(np.array([value.data.ptr], dtype=np.uint64))
        elif isinstance(value, (int, np.integer)):
            buffers.append(np.array([value], dtype=np.int32))
        else:
            raise TypeError(f"no kernel parameter packing for {type(value).__name__}")
    return buffers, np.array([b.ctypes.data for b in buffers], dtype=np.uint64)


def dependent_launcher(function, grid, block, args, shared_mem: int):
    """A callable launching `function` (a CuPy kernel function: its .ptr is the CUfunction) on CuPy's current stream
    as a programmatic dependent launch. The callable holds `function`, and so its module: a module unloaded under it
    made a launch fail with CUDA_ERROR_INVALID_HANDLE (the profiler's child process, which keeps only the launcher)."""
    import cupy
    from cuda.bindings import driver

    buffers, pointers = packed_arguments(args)
    attribute = driver.CUlaunchAttribute()
    attribute.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    attribute.value.programmaticStreamSerializationAllowed = 1
    handle = driver.CUfunction(function.ptr)

    def launch() -> None:
        config = driver.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = grid
        config.blockDimX, config.blockDimY, config.blockDimZ = block
        config.sharedMemBytes = shared_mem
        config.hStream = driver.CUstream(cupy.cuda.get_current_stream().ptr)
        config.attrs = [attribute]
        config.numAttrs = 1
        (err,) = driver.cuLaunchKernelEx(config, handle, pointers.ctypes.data, 0)
        if err != driver.CUresult.CUDA_SUCCESS:
            raise RuntimeError(f"cuLaunchKernelEx: {err.name}")

    launch.keep = (function, buffers, pointers)  # the module and the parameter bytes live as long as the callable
    return launch
