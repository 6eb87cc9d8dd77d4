"""Noise-aware comparison of measurements: SAME / FASTER / SLOWER / UNCLEAR per cell.

Each side of a comparison is one or more rows of one cell (repeats). Its estimate is
the median of the rows' medians; its relative standard error is the larger of
  - within: the robust standard error of each row's samples (farm.measure.stopping.relative_noise),
    combined over the rows (root of the mean square over sqrt of the row count), and
  - between: the spread of the row medians, std / sqrt(rows) / estimate (two rows or more),
so drift between repeats, which no single repeat's samples can show, widens the band.

d = (B - A) / A is the relative change of B's time (positive: B slower), and
u = 2 * sqrt(se_A^2 + se_B^2) its ~95 % half-width. With a tolerance `tol` (default 1 %):
  SAME     the whole band d +- u lies within +-tol: any difference is practically nil;
  SLOWER   the band excludes 0 and d > tol (FASTER: the band excludes 0 and d < -tol);
  UNCLEAR  anything else: the noise is too large to say same or different.
"""
from __future__ import annotations

import itertools
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

from farm.measure.stopping import relative_noise

DEFAULT_TOLERANCE = 0.01


@dataclass(frozen=True)
class Side:
    median_ms: float
    rel_se: float
    rows: int


@dataclass(frozen=True)
class Comparison:
    key: tuple
    a: Side
    b: Side
    diff: float  # (B - A) / A
    band: float  # ~95 % half-width of diff
    verdict: str


def side(rows: list[dict]) -> Side:
    """Estimate and relative standard error of one side (rows of one cell with timings)."""
    medians = [r["median_ms"] for r in rows]
    est = statistics.median(medians)
    within = [relative_noise(r["samples_ms"]) for r in rows]
    within = [w for w in within if math.isfinite(w)]
    se_within = math.sqrt(statistics.fmean(w * w for w in within) / len(within)) if within else math.inf
    se_between = statistics.stdev(medians) / math.sqrt(len(medians)) / est if len(medians) > 1 else 0.0
    return Side(median_ms=est, rel_se=max(se_within, se_between), rows=len(rows))


def verdict(diff: float, band: float, tol: float) -> str:
    if abs(diff) + band <= tol:
        return "SAME"
    if diff - band > 0 and diff > tol:
        return "SLOWER"
    if diff + band < 0 and diff < -tol:
        return "FASTER"
    return "UNCLEAR"


def compare_sides(key: tuple, rows_a: list[dict], rows_b: list[dict], tol: float = DEFAULT_TOLERANCE) -> Comparison:
    a, b = side(rows_a), side(rows_b)
    diff = (b.median_ms - a.median_ms) / a.median_ms
    band = 2.0 * math.hypot(a.rel_se, b.rel_se)
    return Comparison(key, a, b, diff, band, verdict(diff, band, tol))


def _timed(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["status"] == "ok" and r.get("samples_ms")]


def _cell(r: dict) -> tuple:
    return (r["stage"], r["m"], r["n"], r["k"])


def compare_runs(rows: list[dict], run_a: str, run_b: str, tol: float = DEFAULT_TOLERANCE) -> list[Comparison]:
    """Run B against run A, per (gpu_model, stage, shape) present in both."""
    sides: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in _timed(rows):
        if r["run_id"] in (run_a, run_b):
            sides[(r["gpu_model"], *_cell(r))][r["run_id"]].append(r)
    return [compare_sides(key, s[run_a], s[run_b], tol) for key, s in sorted(sides.items()) if s[run_a] and s[run_b]]


def compare_repeats(rows: list[dict], run: str, tol: float = DEFAULT_TOLERANCE) -> list[Comparison]:
    """A/A: every pair of repeats of each cell on each GPU of one run, each repeat a side of its own."""
    cells: dict[tuple, list[dict]] = defaultdict(list)
    for r in _timed(rows):
        if r["run_id"] == run:
            cells[(r["gpu_uuid"], *_cell(r))].append(r)
    out = []
    for key, rs in sorted(cells.items()):
        rs.sort(key=lambda r: r["repeat"])
        out += [compare_sides((*key, f"r{x['repeat']}~r{y['repeat']}"), [x], [y], tol) for x, y in itertools.combinations(rs, 2)]
    return out


def compare_gpus(rows: list[dict], run: str, tol: float = DEFAULT_TOLERANCE) -> list[Comparison]:
    """GPU-to-GPU: every pair of same-model GPUs of one run, per cell (repeats pooled per GPU)."""
    cells: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in _timed(rows):
        if r["run_id"] == run:
            cells[(r["gpu_model"], *_cell(r))][r["gpu_uuid"]].append(r)
    out = []
    for key, by_gpu in sorted(cells.items()):
        for ua, ub in itertools.combinations(sorted(by_gpu), 2):
            out.append(compare_sides((*key, f"{ua[-8:]}~{ub[-8:]}"), by_gpu[ua], by_gpu[ub], tol))
    return out


def summary(comparisons: list[Comparison], min_ms: float = 0.1) -> dict:
    """Verdict counts, false-difference rate, and median |diff| overall and for cells >= min_ms."""
    counts = {v: sum(c.verdict == v for c in comparisons) for v in ("SAME", "FASTER", "SLOWER", "UNCLEAR")}
    n = len(comparisons)
    long = [abs(c.diff) for c in comparisons if min(c.a.median_ms, c.b.median_ms) >= min_ms]
    return {
        "comparisons": n,
        **counts,
        "difference_rate": (counts["FASTER"] + counts["SLOWER"]) / n if n else None,
        "median_abs_diff": statistics.median(abs(c.diff) for c in comparisons) if n else None,
        f"median_abs_diff_ge_{min_ms:g}ms": statistics.median(long) if long else None,
        f"cells_ge_{min_ms:g}ms": len(long),
    }


def format_table(comparisons: list[Comparison]) -> str:
    lines = [f"{'cell':<58} {'A ms':>10} {'B ms':>10} {'diff':>8} {'+-':>7}  verdict"]
    for c in comparisons:
        lines.append(f"{' '.join(map(str, c.key)):<58} {c.a.median_ms:>10.4f} {c.b.median_ms:>10.4f} "
                     f"{100 * c.diff:>+7.2f}% {100 * c.band:>6.2f}%  {c.verdict}")
    return "\n".join(lines)
