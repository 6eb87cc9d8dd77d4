"""Fresh random N(0,1) operands in a stage's input precision, and their exact FP64 values.

fp32 and tf32 stages read FP32 storage (TF32 is a compute mode); fp16 stages read
IEEE half; bf16 stages read bfloat16 bit patterns in uint16 arrays (CuPy has no
bfloat16 dtype), rounded to nearest even from FP32.
"""
from __future__ import annotations


def _to_bf16_bits(x):
    import cupy

    u = x.view(cupy.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(cupy.uint16)


def random_operands(dtype: str, m: int, n: int, k: int, seed: int):
    """(A, B) for C = A.B: MxK and KxN, fresh every call, never zeros."""
    import cupy

    gen = cupy.random.default_rng(seed)
    a = gen.standard_normal((m, k), dtype=cupy.float32)
    b = gen.standard_normal((k, n), dtype=cupy.float32)
    if dtype in ("fp32", "tf32"):
        return a, b
    if dtype == "fp16":
        return a.astype(cupy.float16), b.astype(cupy.float16)
    if dtype == "bf16":
        return _to_bf16_bits(a), _to_bf16_bits(b)
    raise KeyError(f"no input rule for dtype {dtype!r}")


def to_float64(x, dtype: str):
    """The exact values of operand `x` (stored in `dtype`) as float64."""
    import cupy

    if dtype == "bf16":
        return (x.astype(cupy.uint32) << 16).view(cupy.float32).astype(cupy.float64)
    return x.astype(cupy.float64)
