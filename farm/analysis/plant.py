"""Detection rates for planted slowdowns of known size, on real measurements.

Take two runs of identical code (an A/A pair: their noise is real), and plant a slowdown of x in run B: every
per-batch sample of every B row, and its median, multiplied by 1 + x (the clocks, power and every other column left
as measured). B against A then has a known true difference of exactly x on top of the real run-to-run and repeat
noise, and the share of cells called SLOWER is the detection rate at x; at x = 0 every FASTER or SLOWER is a false
difference. Noise is learned from the unplanted rows, as `farm compare` would learn it from the history before B.
"""

from __future__ import annotations

from farm.analysis.compare import DEFAULT_TOLERANCE, VERDICTS, Comparison, compare_rows
from farm.analysis.noise import NoiseModel


def planted(rows: list[dict], x: float) -> list[dict]:
    """Copies of `rows` slowed down by x: samples and median scaled by 1 + x."""
    out = []
    for r in rows:
        s = r.get("samples_ms")
        out.append(
            {
                **r,
                "median_ms": r["median_ms"] * (1 + x) if r.get("median_ms") else r.get("median_ms"),
                "samples_ms": [v * (1 + x) for v in s] if s is not None else None,
            }
        )
    return out


def detection(
    rows_a: list[dict],
    rows_b: list[dict],
    slowdowns: list[float],
    tol: float = DEFAULT_TOLERANCE,
    model: NoiseModel | None = None,
) -> list[dict]:
    """Per planted slowdown (0 first: the A/A false-difference rate): cells compared, verdict counts, detected
    (SLOWER) rate, and false differences (FASTER, or at 0 any FASTER/SLOWER)."""
    model = model or NoiseModel.learn([*rows_a, *rows_b])
    out = []
    for x in [0.0, *sorted(x for x in slowdowns if x)]:
        comps: list[Comparison] = compare_rows(rows_a, planted(rows_b, x), tol, model)
        n = len(comps)
        counts = {v: sum(c.verdict == v for c in comps) for v in VERDICTS}
        wrong = counts["FASTER"] + (counts["SLOWER"] if x == 0 else 0)
        out.append(
            {
                "planted_pct": 100 * x,
                "cells": n,
                **counts,
                "detected": counts["SLOWER"] / n if n and x else None,
                "false_difference": wrong / n if n else None,
            }
        )
    return out


def format_detection(table: list[dict]) -> str:
    lines = [
        f"{'planted':>8} {'cells':>6} {'SLOWER':>7} {'FASTER':>7} {'SAME':>6} {'UNCLEAR':>8} {'detected':>9} {'false':>7}"
    ]
    for r in table:
        det = f"{100 * r['detected']:.1f}%" if r["detected"] is not None else "-"
        false = f"{100 * r['false_difference']:.2f}%" if r["false_difference"] is not None else "-"
        lines.append(
            f"{r['planted_pct']:>7.1f}% {r['cells']:>6} {r['SLOWER']:>7} {r['FASTER']:>7} {r['SAME']:>6} {r['UNCLEAR']:>8} "
            f"{det:>9} {false:>7}"
        )
    return "\n".join(lines)
