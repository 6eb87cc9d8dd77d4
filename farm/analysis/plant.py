"""Detection rates for slowdowns of known size planted in real measurements.

B of an A/A pair (identical code, real noise) is slowed by x: samples and medians times 1 + x, other columns as
measured. B vs A then differs by exactly x plus real noise; the share of cells called SLOWER is the detection rate,
and at x = 0 any FASTER/SLOWER is false. Noise is learned from unplanted rows, as `farm compare` would from history
before B. Paired runs keep their pair ids.

`--cross-fit`: where the pair is its GPU model's only A/A history, its noise cannot judge itself: each half of the
stages (by name, alternately) is judged by noise from the other half's unplanted rows (A and B) and any history.
"""

from __future__ import annotations

from farm.analysis.compare import DEFAULT_TOLERANCE, VERDICTS, Comparison, compare_rows
from farm.analysis.noise import NoiseModel


def cross_fitted(
    rows_a: list[dict],
    rows_b: list[dict],
    tol: float = DEFAULT_TOLERANCE,
    history: list[dict] = (),
    x: float = 0.0,
    equal_clocks: bool = False,
) -> list[Comparison]:
    """B (slowed by x) vs A, each half of the stages judged by the other half's noise."""
    stages = sorted({r["stage"] for r in (*rows_a, *rows_b)})
    half = {stage: i % 2 for i, stage in enumerate(stages)}
    out: list[Comparison] = []
    for h in (0, 1):
        others = [r for r in (*rows_a, *rows_b) if half[r["stage"]] != h]
        model = NoiseModel.learn([*history, *others])
        mine_a = [r for r in rows_a if half[r["stage"]] == h]
        mine_b = planted([r for r in rows_b if half[r["stage"]] == h], x)
        out += compare_rows(mine_a, mine_b, tol, model, equal_clocks)
    return sorted(out, key=lambda c: str(c.key))


def planted(rows: list[dict], x: float) -> list[dict]:
    """Copies of `rows` slowed by x: samples and median times 1 + x."""
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
    cross_fit_history: list[dict] | None = None,
) -> list[dict]:
    """Per planted slowdown, 0 first (A/A false-difference rate): cells, verdict counts, detected (SLOWER) rate, false
    differences (FASTER; at 0 also SLOWER). `cross_fit_history` (maybe []): cross-fit with it, not `model`."""
    model = model or NoiseModel.learn([*rows_a, *rows_b])
    out = []
    for x in [0.0, *sorted(x for x in slowdowns if x)]:
        comps: list[Comparison] = (
            cross_fitted(rows_a, rows_b, tol, cross_fit_history, x)
            if cross_fit_history is not None
            else compare_rows(rows_a, planted(rows_b, x), tol, model)
        )
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
