"""Summary statistics of per-launch time samples: robust ones first (median, IQR)."""

from __future__ import annotations

import numpy as np


def summarize(samples_ms: list[float]) -> dict:
    """median/min/max/quartiles/IQR (ms) and the coefficient of variation of the samples."""
    if not samples_ms:
        raise ValueError("no samples to summarize")
    x = np.asarray(samples_ms, dtype=np.float64)
    q1, median, q3 = np.percentile(x, [25, 50, 75])
    mean = float(x.mean())
    return {
        "median_ms": float(median),
        "min_ms": float(x.min()),
        "max_ms": float(x.max()),
        "q1_ms": float(q1),
        "q3_ms": float(q3),
        "iqr_ms": float(q3 - q1),
        "cv": float(x.std(ddof=1) / mean) if len(x) > 1 and mean > 0 else 0.0,
    }


def student_t_quantile(p: float, df: float) -> float:
    """Quantile p of Student's t with df degrees of freedom: the Cornish-Fisher expansion of Abramowitz & Stegun
    26.7.5 around the normal quantile (within 1 % of the exact value from 3 df at p <= 0.995, 0.25 % from 4 df; exact as df grows).
    Here so that small-sample bands need no SciPy on a GPU host that lacks it."""
    from statistics import NormalDist

    x = NormalDist().inv_cdf(p)
    g = (
        (x**3 + x) / 4,
        (5 * x**5 + 16 * x**3 + 3 * x) / 96,
        (3 * x**7 + 19 * x**5 + 17 * x**3 - 15 * x) / 384,
        (79 * x**9 + 776 * x**7 + 1482 * x**5 - 1920 * x**3 - 945 * x) / 92160,
    )
    return x + sum(gi / df ** (i + 1) for i, gi in enumerate(g))
