"""Detection rates for planted slowdowns of known size, on real measurements.

Take two runs of identical code (an A/A pair: their noise is real), and plant a slowdown of x in run B: every
per-batch sample of every B row, and its median, multiplied by 1 + x (the clocks, power and every other column left
as measured). B against A then has a known true difference of exactly x on top of the real run-to-run and repeat
noise, and the share of cells called SLOWER is the detection rate at x; at x = 0 every FASTER or SLOWER is a false
difference. Noise is learned from the unplanted rows, as `farm compare` would learn it from the history before B.
Paired runs (a paired sweep's arms) keep their pair ids: B's rows planted, the pairs are judged by the paired design.

Cross-fitted (`cross_fitted`, `farm compare --cross-fit`): where the compared pair is the only A/A history of its GPU
model (a first paired A/A, say), its noise cannot judge itself. The stages are split in two halves (sorted by name,
alternately), and each half is compared with the noise learned from the other half's rows (both sides, unplanted)
and any history: no cell's own difference widens its own band.
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
    """B (slowed by x) against A, each half of the stages judged with the noise of the other half (module docstring)."""
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
    cross_fit_history: list[dict] | None = None,
) -> list[dict]:
    """Per planted slowdown (0 first: the A/A false-difference rate): cells compared, verdict counts, detected
    (SLOWER) rate, and false differences (FASTER, or at 0 any FASTER/SLOWER). `cross_fit_history` (a list, maybe
    empty): judged cross-fitted with that history instead of with `model`."""
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
