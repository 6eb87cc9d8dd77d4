"""Verification tolerances, the one place they are written down.

An element passes when |x - ref| <= atol + rtol*|ref|; NaN never passes. Inputs are
N(0,1), so a dot product of length K sums K terms of magnitude ~1.

fp32 (SIMT kernels vs cuBLAS FP32): the rounding difference between two FP32
  summation orders grows like eps*K (about 1.7*eps*K at the worst element of an
  8192^2 C, by a random-walk estimate). atol = 4*eps*K leaves a 2x margin and is
  still ~1000x below the error of one missing or doubled k-term (|a*b| ~ 1).
fp16, bf16 (inputs stored in that precision, FP32 accumulate): both sides multiply
  the same, exactly representable inputs, so products are exact in FP32 and only the
  accumulation differs; tensor cores add in their own order and precision, hence
  4x the fp32 margin: atol = 16*eps*K.
tf32 (FP32 inputs rounded to a 10-bit mantissa inside the tensor cores): each side
  rounds its inputs (round-to-nearest or truncation, unspecified for cuBLAS), so each
  product carries a relative error up to ~2^-10 with random sign and the difference
  grows like 2^-11*sqrt(K) (std ~1.2*2^-11*sqrt(K) between two roundings); at 6 sigma
  over a large C, atol = 10 * 2^-11 * sqrt(K): 0.31 at K = 4096, where |C| ~ 64.
  Truncation is what Hopper's wgmma stages do to A (kernels/hopper_tf32 hand its FP32 bits to
  the tensor cores, which ignore the low 13 mantissa bits; B's fragments pass through registers
  and are rounded to nearest). Against round-to-nearest it differs by 0 or 1 TF32 ulp with equal
  odds: relative variance 0.5 * E[1/m^2] * 2^-20 = 0.27 * 2^-20 per operand (mantissa m
  log-uniform on [1, 2)), so C differs by std 1.04 * 2^-11 * sqrt(K) where one operand is
  rounded differently and 1.47 * 2^-11 * sqrt(K) where both are: the atol is 9.6 and 6.8 sigma
  of them. On an H100, whose cuBLAS rounds both (walk B's max scaled error against it: 0.03-0.05),
  the largest scaled errors at 2048^3-8192^3 were 0.38-0.45 with B rounded, 0.57-0.65 with both
  truncated (kernels/hopper_tf32/README.md).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

EPS_FP32 = 2.0**-23
TF32_UNIT = 2.0**-11


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


def tolerance(dtype: str, k: int) -> Tolerance:
    """Tolerance for a kernel of input precision `dtype` against a same-class reference."""
    if dtype == "fp32":
        return Tolerance(atol=4 * EPS_FP32 * k, rtol=1e-5)
    if dtype in ("fp16", "bf16"):
        return Tolerance(atol=16 * EPS_FP32 * k, rtol=1e-4)
    if dtype == "tf32":
        return Tolerance(atol=10 * TF32_UNIT * math.sqrt(k), rtol=2 * TF32_UNIT)
    raise KeyError(f"no tolerance rule for dtype {dtype!r}")
