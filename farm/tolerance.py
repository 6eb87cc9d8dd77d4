"""Verification tolerances, the one place they are written down.

An element passes when |x - ref| <= atol + rtol*|ref|; NaN never passes.
Inputs are N(0,1), so a dot product of length K sums K terms of magnitude ~1 and
the rounding difference between two FP32 summation orders grows like eps*K
(about 1.7*eps*K at the worst element of an 8192^2 C, by a random-walk estimate).
atol = 4*eps*K leaves a 2x margin and is still ~1000x below the error of a
single missing or doubled k-term (|a*b| ~ 1), the smallest real bug.
"""
from __future__ import annotations

from dataclasses import dataclass

EPS = {"fp32": 2.0**-23}


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


def tolerance(dtype: str, k: int) -> Tolerance:
    """Tolerance for a kernel of input precision `dtype` against a same-class reference."""
    if dtype == "fp32":
        return Tolerance(atol=4 * EPS["fp32"] * k, rtol=1e-5)
    raise KeyError(f"no tolerance rule for dtype {dtype!r}")
