"""Element-wise verification on the GPU: poison, compare with tolerance, NaN never passes."""
from __future__ import annotations

from farm.measure.tolerance import Tolerance


def poison(c) -> None:
    """Fill an output with NaN so an element the kernel never writes cannot pass."""
    import cupy

    c.fill(cupy.nan)


def compare(out, ref, tol: Tolerance) -> dict:
    """Verification columns of a row: |out - ref| <= atol + rtol*|ref| for every element."""
    import cupy

    ref = ref.astype(cupy.float64, copy=False)
    err = cupy.abs(out.astype(cupy.float64) - ref)
    bound = tol.atol + tol.rtol * cupy.abs(ref)
    passed = err <= bound  # NaN compares False: it fails
    mismatches = int(out.size - int(cupy.count_nonzero(passed)))
    err = cupy.where(cupy.isnan(err), cupy.inf, err)
    return {
        "verified": mismatches == 0,
        "max_abs_error": float(err.max()),
        "max_scaled_error": float((err / bound).max()),
        "mismatches": mismatches,
        "atol": tol.atol,
        "rtol": tol.rtol,
    }
