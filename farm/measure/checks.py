"""A cell's data on the GPU: fresh N(0,1) inputs in the stage's storage precision, their exact FP64 values, outputs
poisoned with NaN, and the element-wise check of an output against its reference.

fp32 and tf32 stages read FP32 storage (TF32 is a compute mode); fp16 stages read IEEE half; bf16 stages read
bfloat16 bit patterns in uint16 arrays (CuPy has no bfloat16 dtype), rounded to nearest even from FP32.

All of it is our own kernels (checks.cu: a counter-based generator, conversions, the comparison), compiled like the
stages: CuPy's generic element-wise kernels and generators would each be generated and compiled the first time a
process uses them, which cost a fresh H100's first cell 6 s. Poisoning is a memset: all-ones bits are a NaN in FP32.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from farm.measure.compiler import Compiled, CompiledModule, compile_timed
from farm.measure.tolerance import Tolerance

SOURCE = Path(__file__).with_name("checks.cu")
KERNELS = ("normals", "to_half", "to_bf16_bits", "widen<float>", "widen<__half>", "widen_bf16", "compare<float>", "compare<double>")
# Each input precision's storage from FP32 normals: none (FP32 itself), or the kernel and the array dtype.
_NARROWING = {"fp32": None, "tf32": None, "fp16": ("to_half", "float16"), "bf16": ("to_bf16_bits", "uint16")}
_BLOCK = 256
_BLOCKS_PER_SM = 32  # grid-stride loops: enough blocks to fill any chip, one atomic per warp at the end


def compile_checks(arch: str) -> Compiled:
    """checks.cu for `arch` (cached on disk like every stage)."""
    return compile_timed(SOURCE, arch, KERNELS)


class Checks:
    """checks.cu loaded on the current CUDA device; every call works on the current stream."""

    def __init__(self, compiled: CompiledModule, sm_count: int) -> None:
        import cupy

        module = cupy.RawModule(path=str(compiled.cubin_path))
        self._kernels = {name: module.get_function(compiled.lowered_names[name]) for name in KERNELS}
        self._max_grid = _BLOCKS_PER_SM * sm_count
        self._stats = cupy.empty(3, dtype=cupy.uint64)

    def _launch(self, name: str, n: int, *args) -> None:
        """Kernel `name` over `n` elements, on the current stream."""
        grid = max(min(math.ceil(n / _BLOCK), self._max_grid), 1)
        self._kernels[name]((grid,), (_BLOCK,), args)

    def random_operands(self, dtype: str, m: int, n: int, k: int, seed: int):
        """(A, B) for C = A.B: MxK and KxN, a function of `seed` (below 2**63) alone, no element zero."""
        import cupy

        if dtype not in _NARROWING:
            raise KeyError(f"no input rule for dtype {dtype!r}")
        storage = cupy.float32 if _NARROWING[dtype] is None else _NARROWING[dtype][1]
        a, b = cupy.empty((m, k), dtype=storage), cupy.empty((k, n), dtype=storage)
        self.refill(a, b, dtype, seed)
        return a, b

    def refill(self, a, b, dtype: str, seed: int) -> None:
        """Fresh inputs written into existing operands (the pointers a captured graph launches with stay valid):
        the values random_operands would make for `seed`."""
        import cupy

        narrowing = _NARROWING[dtype]
        for x, stream in ((a, 2 * seed), (b, 2 * seed + 1)):  # no seed shares a stream
            if narrowing is None:
                self._normals_into(x, stream)
                continue
            wide = cupy.empty(x.shape, dtype=cupy.float32)
            self._normals_into(wide, stream)
            self._launch(narrowing[0], x.size, wide, x, np.int64(x.size))

    def _normals_into(self, x, seed: int) -> None:
        self._launch("normals", x.size, x, np.int64(x.size), np.uint64(seed % 2**64))

    def to_float64(self, x, dtype: str):
        """The exact values of operand `x` (stored in `dtype`) as float64."""
        import cupy

        kernel = {"fp32": "widen<float>", "tf32": "widen<float>", "fp16": "widen<__half>", "bf16": "widen_bf16"}[dtype]
        y = cupy.empty(x.shape, dtype=cupy.float64)
        self._launch(kernel, x.size, x, y, np.int64(x.size))
        return y

    @staticmethod
    def poison(c) -> None:
        """Fill an FP32 output with NaN so that an element the kernel never writes cannot pass."""
        import cupy

        cupy.cuda.runtime.memsetAsync(c.data.ptr, 0xFF, c.nbytes, cupy.cuda.get_current_stream().ptr)

    def compare(self, out, ref, tol: Tolerance) -> dict:
        """Verification columns of a row: |out - ref| <= atol + rtol*|ref| for every element of the FP32 `out`
        against an FP32 or FP64 `ref`, computed in FP64; NaN never passes (and counts as an infinite error)."""
        import cupy

        if out.shape != ref.shape or out.dtype != cupy.float32 or ref.dtype not in (cupy.float32, cupy.float64):
            raise ValueError(f"compare needs FP32 output and FP32/FP64 reference of one shape, got {out.dtype}{out.shape} "
                             f"and {ref.dtype}{ref.shape}")
        cupy.cuda.runtime.memsetAsync(self._stats.data.ptr, 0, self._stats.nbytes, cupy.cuda.get_current_stream().ptr)
        self._launch("compare<float>" if ref.dtype == cupy.float32 else "compare<double>", out.size,
                     out, ref, np.int64(out.size), np.float64(tol.atol), np.float64(tol.rtol), self._stats)
        mismatches, worst, worst_scaled = self._stats.get()  # waits for the stream: a kernel's fault surfaces here
        return {
            "verified": int(mismatches) == 0,
            "max_abs_error": float(np.array(worst, dtype=np.uint64).view(np.float64)),
            "max_scaled_error": float(np.array(worst_scaled, dtype=np.uint64).view(np.float64)),
            "mismatches": int(mismatches),
            "atol": tol.atol,
            "rtol": tol.rtol,
        }
