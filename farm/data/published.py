"""The write-ups' published figures as a reference table (facts we cite, never our measurements).

datasets/published.csv is this table written out (a test keeps the two identical):
`python -m farm published > datasets/published.csv`.
"""

from __future__ import annotations

import csv
import io

from kernels.registry import catalog
from kernels.stage import Published

# The baselines the write-ups timed (a stage's Published % is against these).
PUBLISHED_BASELINES = [
    (
        "A",
        "cublas_fp32",
        Published(
            "NVIDIA GeForce RTX 3050 Laptop GPU",
            2048,
            2048,
            2048,
            4.27,
            100.0,
            "walk A: RTX 3050 Laptop SIMT FP32 write-up (Pupking/01_tiled_gemm), 2048^3, ampere_sgemm_128x128_nn",
        ),
    ),
    (
        "B",
        "cublas_tf32",
        Published(
            "NVIDIA GeForce RTX 5060 Laptop GPU",
            4096,
            4096,
            4096,
            8.535476,
            100.0,
            "walk B: RTX 5060 Laptop TF32 write-up (WingEdge777/vitamin-cuda), 4096^3, sgemm_cublas_tf32",
        ),
    ),
]

COLUMNS = (
    "kind",
    "walk",
    "family",
    "stage",
    "baseline",
    "device",
    "m",
    "n",
    "k",
    "ms",
    "tflops",
    "pct_of_baseline",
    "source",
)


def _row(walk: str, family: str, stage: str, baseline: str, p: Published) -> dict:
    return {
        "kind": "published",
        "walk": walk,
        "family": family,
        "stage": stage,
        "baseline": baseline,
        "device": p.device,
        "m": p.m,
        "n": p.n,
        "k": p.k,
        "ms": p.ms,
        "tflops": round(2 * p.m * p.n * p.k / (p.ms * 1e9), 3) if p.ms else None,
        "pct_of_baseline": p.pct_of_baseline,
        "source": p.source,
    }


def published_rows() -> list[dict]:
    """Every published figure: the baselines the write-ups timed, then each stage's."""
    rows = [_row(walk, "baseline", name, name, p) for walk, name, p in PUBLISHED_BASELINES]
    return rows + [_row(s.walk, s.family, s.name, s.baseline, s.published) for s in catalog() if s.published]


def published_csv() -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(published_rows())
    return out.getvalue()
