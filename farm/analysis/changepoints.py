"""Change points: a penalised step fit over each series' runs (as asv), noise-model weighted, not pairwise verdicts.

A series is a cell (GPU model, stage, shape, timing mode) over time; a point is a run's mean log time, variance
s2*/n + v (shrunk repeat variance, n repeats, run variance: farm/analysis/noise.py). Optimal partitioning
(Jackson et al. 2005; asv, PELT) exactly minimises sum w_i (y_i - level)^2, w_i = 1 / var_i, plus PENALTY(n) per
step: chi2_1's 1 - ALPHA quantile (a spurious step gains a chi-square(1)) + 2 ln n (BIC's price for the best of n-1
places), keeping false steps below ~ALPHA per series. Steps must exceed half the tolerance (compare's
smallest reported difference).

A step across a card, driver, CUDA, library, clock or power-limit change is named an environment change, not a
regression or improvement (farm/analysis/attribution.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from farm.analysis import attribution
from farm.analysis.compare import REPORTED, side
from farm.analysis.noise import NoiseModel

ALPHA = 0.001  # per series (Otava's significance level)


def penalty(n: int) -> float:
    z = NormalDist().inv_cdf(1 - ALPHA / 2)
    return z * z + 2 * math.log(max(n, 2))


def step_fit(y: list[float], var: list[float], beta: float | None = None) -> list[int]:
    """Starts of new segments (none: one level), minimising the penalised residual."""
    n = len(y)
    if n < 2:
        return []
    beta = penalty(n) if beta is None else beta
    w = [1 / v for v in var]
    # prefix sums: a segment's cost in O(1)
    sw, swy, swyy = [0.0], [0.0], [0.0]
    for wi, yi in zip(w, y):
        sw.append(sw[-1] + wi)
        swy.append(swy[-1] + wi * yi)
        swyy.append(swyy[-1] + wi * yi * yi)

    def cost(i: int, j: int) -> float:  # points i..j-1
        W, WY = sw[j] - sw[i], swy[j] - swy[i]
        return swyy[j] - swyy[i] - WY * WY / W

    best, last = [0.0] + [math.inf] * n, [0] * (n + 1)
    for j in range(1, n + 1):
        for i in range(j):
            c = best[i] + cost(i, j) + (beta if i else 0.0)
            if c < best[j]:
                best[j], last[j] = c, i
    starts, j = [], n
    while j > 0:
        if last[j]:
            starts.append(last[j])
        j = last[j]
    return sorted(starts)


@dataclass(frozen=True)
class Step:
    run: int  # index of the new level's first run
    diff: float  # relative level change (positive: slower)
    band: float  # 99 % half-width of that change (log)
    verdict: str  # SLOWER or FASTER
    environment: tuple[str, ...]  # what else changed; empty: the code's own change


def run_point(rows: list[dict], model: NoiseModel) -> tuple[float, float]:
    """(mean log time, variance) of a cell's run, over its repeats."""
    s = side(rows, model)
    return math.log(s.median_ms), s.rel_se**2 + model.lookup(rows[0]).run_var


def steps(runs: list[list[dict]], model: NoiseModel, tol: float) -> list[Step]:
    """One series' changes; `runs` (each a list of rows) oldest first."""
    points = [run_point(rs, model) for rs in runs]
    y, var = [p[0] for p in points], [p[1] for p in points]
    starts = step_fit(y, var)
    bounds = [0, *starts, len(y)]
    levels = []
    for i, j in zip(bounds, bounds[1:]):
        W = sum(1 / v for v in var[i:j])
        levels.append((sum(yi / v for yi, v in zip(y[i:j], var[i:j])) / W, 1 / W))
    z = NormalDist().inv_cdf(0.995)
    out = []
    for k, start in enumerate(starts):
        (m0, v0), (m1, v1) = levels[k], levels[k + 1]
        d = m1 - m0
        if abs(d) <= math.log1p(REPORTED * tol):
            continue  # real, but below what compare reports
        env = attribution.differences(runs[start - 1], runs[start])
        out.append(
            Step(
                start,
                math.expm1(d),
                z * math.sqrt(v0 + v1),
                "SLOWER" if d > 0 else "FASTER",
                tuple(text for label, text in env if label not in attribution.CODE),
            )
        )
    return out
