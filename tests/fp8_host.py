"""E4M3 and E5M2 on the host, written from the OCP 8-bit floating point spec (no CUDA header): the value of each of
the 256 codes, and E4M3's round-to-nearest-even with saturation, for tests that check the harness's FP8 kernels and
baselines."""

import numpy as np

E4M3_MAX = 448.0
E5M2_MAX = 57344.0


def e4m3_values() -> np.ndarray:
    """float64 value of every E4M3 code (sign bit 7, exponent bits 6-3 with bias 7, 3 mantissa bits; S.1111.111 is
    NaN, there are no infinities)."""
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exponent, mantissa = (codes >> 3) & 0xF, codes & 0x7
    magnitude = np.where(exponent == 0, mantissa / 8 * 2.0**-6, (1 + mantissa / 8) * 2.0 ** (exponent - 7.0))
    values = sign * magnitude
    values[(exponent == 15) & (mantissa == 7)] = np.nan
    return values


def e5m2_values() -> np.ndarray:
    """float64 value of every E5M2 code (sign bit 7, exponent bits 6-2 with bias 15, 2 mantissa bits, IEEE-like:
    exponent 31 is infinity with mantissa 0, else NaN)."""
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exponent, mantissa = (codes >> 2) & 0x1F, codes & 0x3
    magnitude = np.where(exponent == 0, mantissa / 4 * 2.0**-14, (1 + mantissa / 4) * 2.0 ** (exponent - 15.0))
    values = sign * magnitude
    values[exponent == 31] = np.where(mantissa[exponent == 31] == 0, sign[exponent == 31] * np.inf, np.nan)
    return values


def e4m3_round(x: np.ndarray) -> np.ndarray:
    """The E4M3 codes nearest to x (ties to the even code), saturating at +-448."""
    return _round_to_codes(x, e4m3_values())


def e5m2_round(x: np.ndarray) -> np.ndarray:
    """The E5M2 codes nearest to x (ties to the even code), saturating at +-57344 (the conversion's SATFINITE)."""
    return _round_to_codes(x, e5m2_values())


def _round_to_codes(x: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The codes of a format (`values`: each code's value) nearest to x, ties to the even code (the even mantissa),
    saturating at its largest finite value."""
    finite = np.flatnonzero(np.isfinite(values) & ((np.arange(256) & 0x80) == 0))  # non-negative codes, ascending
    grid = values[finite]
    mag = np.minimum(np.abs(x).astype(np.float64), grid[-1])
    hi = np.clip(np.searchsorted(grid, mag), 1, len(grid) - 1)
    lo = hi - 1
    d_lo, d_hi = mag - grid[lo], grid[hi] - mag
    pick = np.where(d_lo < d_hi, lo, np.where(d_hi < d_lo, hi, np.where(finite[lo] % 2 == 0, lo, hi)))
    return (finite[pick] | np.where(x < 0, 0x80, 0)).astype(np.uint8)
