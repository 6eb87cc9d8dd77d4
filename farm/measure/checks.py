"""A cell's data on the GPU: fresh N(0,1) inputs in the stage's storage precision, their exact FP64 values, outputs
poisoned with NaN, and the element-wise check of an output against its reference.

fp32 and tf32 stages read FP32 storage (TF32 is a compute mode); fp16 stages read IEEE half; bf16 stages read
bfloat16 bit patterns in uint16 arrays (CuPy has no bfloat16 dtype), rounded to nearest even from FP32.

FP8 classes (FP8 below: fp8_e4m3, E4M3 A and B) read FP8 bytes in uint8 arrays with a per-tensor scale each: the FP32
normals are scaled so that the tensor's largest |x| lands on the format's largest value (448 for E4M3), rounded to
nearest even, and the dequantisation factors (amax / 448, about 0.01 for N(0,1) inputs) go to a `scales` array on
the device (new_scales: A's, then B's, each at the start of its own 256-byte slot, since cuBLASLt refuses a scale
pointer 4 bytes into an allocation with CUBLAS_STATUS_NOT_SUPPORTED, seen on an H100), which kernels and libraries
read through pointers (so a captured graph picks up the scales of fresh inputs). An element's value is its FP8 value times its tensor's scale; the FP64 reference multiplies
those. Operand layout: both operands K-major, as wgmma and cuBLASLt need FP8 on Hopper ("TN"): A is M x K and B is
stored N x K (row n holds column n of the product's B), so C = A . B_stored^T.

All of it is our own kernels (checks.cu: a counter-based generator, conversions, the comparison, and the copies of a
stage that runs N padded, farm/measure/padding.py), compiled like the
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
KERNELS = (
    "normals",
    "to_half",
    "to_bf16_bits",
    "widen<float>",
    "widen<__half>",
    "widen_bf16",
    "compare<float>",
    "compare<double>",
    "amax",
    "to_fp8<__NV_E4M3>",
    "to_fp8<__NV_E5M2>",
    "widen_fp8<__NV_E4M3>",
    "widen_fp8<__NV_E5M2>",
    "pad_columns<unsigned short>",
    "unpad_columns<float>",
)
# Each input precision's storage from FP32 normals: none (FP32 itself), or the kernel and the array dtype.
_NARROWING = {"fp32": None, "tf32": None, "fp16": ("to_half", "float16"), "bf16": ("to_bf16_bits", "uint16")}
# FP8 classes: each operand's format (A's, B's) as checks.cu's template argument.
FP8 = {"fp8_e4m3": ("__NV_E4M3", "__NV_E4M3"), "fp8_e4m3_e5m2": ("__NV_E4M3", "__NV_E5M2")}
SCALE_SLOT = 64  # floats (256 bytes) between the two dequantisation factors of a `scales` array
_BLOCK = 256
_BLOCKS_PER_SM = 32  # grid-stride loops: enough blocks to fill any chip, one atomic per warp at the end
_MAX_GRID_Y = 65535


def new_scales():
    """A device array for an FP8 cell's two dequantisation factors (A's, B's), each in its own aligned slot."""
    import cupy

    return cupy.zeros((2, SCALE_SLOT), dtype=cupy.float32)


def scale_of(scales, operand: int):
    """Operand `operand`'s (0: A, 1: B) dequantisation factor: a one-element view at the start of its slot."""
    return scales[operand, :1]


def scale_args(scales) -> dict:
    """An FP8 stage's SCALE_A / SCALE_B launch args (kernels.registry.Launch); none where `scales` is None."""
    return {} if scales is None else {"SCALE_A": scale_of(scales, 0), "SCALE_B": scale_of(scales, 1)}


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

    def random_operands(self, dtype: str, m: int, n: int, k: int, seed: int, scales=None):
        """(A, B) for C = A.B: MxK and KxN (FP8: B stored NxK, `scales` a new_scales() array that receives the
        dequantisation factors), a function of `seed` (below 2**63) alone, no element zero (FP8: none but those
        that round to zero)."""
        import cupy

        if dtype in FP8:
            a, b = cupy.empty((m, k), dtype=cupy.uint8), cupy.empty((n, k), dtype=cupy.uint8)
        elif dtype in _NARROWING:
            storage = cupy.float32 if _NARROWING[dtype] is None else _NARROWING[dtype][1]
            a, b = cupy.empty((m, k), dtype=storage), cupy.empty((k, n), dtype=storage)
        else:
            raise KeyError(f"no input rule for dtype {dtype!r}")
        self.refill(a, b, dtype, seed, scales)
        return a, b

    def refill(self, a, b, dtype: str, seed: int, scales=None) -> None:
        """Fresh inputs written into existing operands (the pointers a captured graph launches with stay valid):
        the values random_operands would make for `seed`."""
        import cupy

        if dtype in FP8 and (scales is None or scales.shape != (2, SCALE_SLOT) or scales.dtype != cupy.float32):
            raise ValueError(f"{dtype} operands need a new_scales() array for their dequantisation factors")
        narrowing = _NARROWING.get(dtype)
        for i, (x, stream) in enumerate(((a, 2 * seed), (b, 2 * seed + 1))):  # no seed shares a stream
            if dtype not in FP8 and narrowing is None:
                self._normals_into(x, stream)
                continue
            wide = cupy.empty(x.shape, dtype=cupy.float32)
            self._normals_into(wide, stream)
            if dtype in FP8:
                amax_bits = cupy.zeros(1, dtype=cupy.uint32)
                self._launch("amax", x.size, wide, np.int64(x.size), amax_bits)
                self._launch(
                    f"to_fp8<{FP8[dtype][i]}>", x.size, wide, x, np.int64(x.size), amax_bits, scale_of(scales, i)
                )
            else:
                self._launch(narrowing[0], x.size, wide, x, np.int64(x.size))

    def _normals_into(self, x, seed: int) -> None:
        self._launch("normals", x.size, x, np.int64(x.size), np.uint64(seed % 2**64))

    def to_float64(self, x, dtype: str, scales=None, operand: int = 0):
        """The exact values of operand `x` (stored in `dtype`) as float64. FP8: dequantised by its factor in
        `scales` (new_scales), `operand` 0 for A and 1 for B (their factors and formats differ)."""
        import cupy

        y = cupy.empty(x.shape, dtype=cupy.float64)
        if dtype in FP8:
            self._launch(f"widen_fp8<{FP8[dtype][operand]}>", x.size, x, scale_of(scales, operand), y, np.int64(x.size))
            return y
        kernel = {"fp32": "widen<float>", "tf32": "widen<float>", "fp16": "widen<__half>", "bf16": "widen_bf16"}[dtype]
        self._launch(kernel, x.size, x, y, np.int64(x.size))
        return y

    def pad_columns(self, x, padded) -> None:
        """`padded` (rows x P, P a multiple of 8) := the 16-bit `x` (rows x cols, cols <= P), zeros past its columns."""
        self._launch_rows("pad_columns<unsigned short>", (x, padded), x, padded, 2)

    def unpad_columns(self, padded, x) -> None:
        """The FP32 `x` (rows x cols) := the first cols columns of `padded` (rows x P, P a multiple of 4)."""
        self._launch_rows("unpad_columns<float>", (padded, x), x, padded, 4)

    def _launch_rows(self, name: str, pointers: tuple, x, padded, itemsize: int) -> None:
        """A pad or unpad kernel between `x` and `padded`: one thread a 16-byte chunk of a padded row, a block's 256
        threads over a row's chunks (up to 256 of them) times as many rows as that leaves."""
        (rows, cols), padded_cols = x.shape, padded.shape[1]
        if {x.itemsize, padded.itemsize} != {itemsize} or padded.shape[0] != rows or not cols <= padded_cols:
            raise ValueError(f"{name}: {x.dtype}{x.shape} and padded {padded.dtype}{padded.shape} do not match")
        if padded_cols * itemsize % 16:
            raise ValueError(f"{name}: padded rows of {padded_cols * itemsize} bytes are not whole 16-byte chunks")
        per_row = padded_cols * itemsize // 16
        across = min(_BLOCK, 1 << (per_row - 1).bit_length())
        block = (across, _BLOCK // across)
        grid = (min(math.ceil(per_row / across), self._max_grid), min(math.ceil(rows / block[1]), _MAX_GRID_Y))
        self._kernels[name](grid, block, (*pointers, np.int64(rows), np.int64(cols), np.int64(padded_cols)))

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
            raise ValueError(
                f"compare needs FP32 output and FP32/FP64 reference of one shape, got {out.dtype}{out.shape} "
                f"and {ref.dtype}{ref.shape}"
            )
        cupy.cuda.runtime.memsetAsync(self._stats.data.ptr, 0, self._stats.nbytes, cupy.cuda.get_current_stream().ptr)
        self._launch(
            "compare<float>" if ref.dtype == cupy.float32 else "compare<double>",
            out.size,
            out,
            ref,
            np.int64(out.size),
            np.float64(tol.atol),
            np.float64(tol.rtol),
            self._stats,
        )
        mismatches, worst, worst_scaled = self._stats.get()  # waits for the stream: a kernel's fault surfaces here
        return {
            "verified": int(mismatches) == 0,
            "max_abs_error": float(np.array(worst, dtype=np.uint64).view(np.float64)),
            "max_scaled_error": float(np.array(worst_scaled, dtype=np.uint64).view(np.float64)),
            "mismatches": int(mismatches),
            "atol": tol.atol,
            "rtol": tol.rtol,
        }
