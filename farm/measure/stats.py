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
