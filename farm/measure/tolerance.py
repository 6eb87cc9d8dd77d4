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
fp8_e4m3 (E4M3 inputs with a per-tensor scale each, FP32 accumulate and output; farm/measure/checks.py): the
  reference is the FP64 product of the dequantised inputs, exact, and a product of two FP8 values (8 significant
  bits at most) is exact in FP32, so again only the accumulation differs; the scales multiply once at the end
  (relative 2^-23). But Hopper's FP8 tensor cores do not accumulate in full FP32: the sum they keep across
  instructions holds about 13 mantissa bits, truncated (SageAttention2 measured an FP22 accumulator in
  mma.f32.e4m3.e4m3.f32; DeepSeek-V3 reports "around 14 bits" on the H800 and nearly 2 % worst relative error at
  K = 4096). A kernel that keeps the whole K in wgmma's accumulators loses up to 2^-13 |s_j| at each of its K/32
  instructions (k32), s_j the running sum; at the worst of a large C's elements |s_j| stays below about
  4 sqrt(K), so the error is at most W = 2^-13 * (K/32) * 4 sqrt(K), and atol = W: 0.0625 at K = 256, 0.5 at
  K = 1024, 4.0 at K = 4096 (|C| ~ 64), 11.3 at K = 8192, still below one missing k32 instruction's 32 terms
  (~5.7 rms per element, so most of a tile's elements fail). rtol = 2^-13: the truncation scales with |C|.
  Measured on an H100 (tests/test_gpu_fp8.py, K = 256 to 1024): f_wgmma_fp8, which accumulates the whole K in
  wgmma, against cuBLASLt at 0.54-0.57 of W, the same fraction at every K (the K^1.5 shape holds); cuBLASLt
  against the FP64 product at 0.07-0.6 of W (it promotes partial sums to FP32 every few instructions unless told
  CUBLASLT_MATMUL_DESC_FAST_ACCUM, which the farm leaves off, so its error grows far slower than W). An earlier
  atol of W / 2 failed the whole-K kernel at 1.07-1.16 of it. The rows' max_scaled_error shows how close each
  kernel and library comes: a two-level-accumulating kernel sits far inside this bound.
fp8_e4m3_e5m2 (E4M3 A, E5M2 B: 2 mantissa bits, 3 significant): the same rule, and why it is not looser. E5M2's coarser
  rounding is in the inputs, and the reference is the FP64 product of those rounded inputs, dequantised exactly, so it
  never enters the check. A product of an E4M3 and an E5M2 value has 7 significant bits at most, exact in FP32 (and in
  the tensor cores' products) as E4M3 x E4M3's 8 are; the error left is again the accumulator's truncation per k32
  instruction, 2^-13 of the running sum, which depends on the sum's size and not on the operands' format. The running
  sum is the same size: the dequantised B is N(0,1) rounded to 3 significant bits (relative error up to 2^-3, mean
  zero), so |s_j| still stays below about 4 sqrt(K) at the worst element. E5M2's subnormals (down to 2^-16 of a scale
  that puts amax at 57344) are exact too; inputs that round to zero are zeros on both sides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

EPS_FP32 = 2.0**-23
TF32_UNIT = 2.0**-11
HOPPER_FP8_ACCUMULATOR_UNIT = 2.0**-13  # the ~13 mantissa bits Hopper's FP8 tensor cores keep in their sums
FP8_INSTRUCTION_K = 32  # wgmma m64nNk32: one truncation of the running sum per 32 k


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
    if dtype in ("fp8_e4m3", "fp8_e4m3_e5m2"):
        return Tolerance(
            atol=HOPPER_FP8_ACCUMULATOR_UNIT * (k / FP8_INSTRUCTION_K) * 4 * math.sqrt(k),
            rtol=HOPPER_FP8_ACCUMULATOR_UNIT,
        )
    raise KeyError(f"no tolerance rule for dtype {dtype!r}")
