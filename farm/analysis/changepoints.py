"""Change points in a history: a penalised step fit over each series' runs, as asv does, with the noise model's
variances, not verdicts between consecutive runs.

A series is one cell (GPU model, stage, shape, timing mode) over its runs in time order. Each run is one point: the
mean log time of its repeats, with variance s2*/n + v (its repeat variance, the class's shrunk by the run's own
repeats, over its repeats, plus the run variance: farm/analysis/noise.py). The fit is the piecewise-constant series
minimising

    sum over segments of sum_i w_i (y_i - mean_segment)^2  +  PENALTY(n) x (segments - 1),     w_i = 1 / var_i

found exactly by optimal partitioning (dynamic programming over the last change, Jackson et al. 2005; what asv's
step detection and PELT solve). Under no change, one extra step lowers the weighted residual by a chi-square(1)
at the best of n-1 places; PENALTY(n) = chi2_1 quantile at 1 - ALPHA plus 2 ln n (the place's cost, as BIC counts
it) keeps false steps below about ALPHA per series. A step is marked only where it also exceeds half the tolerance (the smallest difference compare reports).

A step between two runs that ran on different cards, drivers, CUDA or library versions, clocks or power limits is
marked as an environment change, named, and not counted as a regression or an improvement
(farm/analysis/attribution.py says what differed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from farm.analysis import attribution
from farm.analysis.compare import REPORTED, side
from farm.analysis.noise import NoiseModel

ALPHA = 0.001  # per series: Otava's significance level for a change point


def penalty(n: int) -> float:
    z = NormalDist().inv_cdf(1 - ALPHA / 2)
    return z * z + 2 * math.log(max(n, 2))


def step_fit(y: list[float], var: list[float], beta: float | None = None) -> list[int]:
    """Indices where a new segment begins (none: one level), minimising the penalised weighted residual."""
    n = len(y)
    if n < 2:
        return []
    beta = penalty(n) if beta is None else beta
    w = [1 / v for v in var]
    # prefix sums of w, w*y, w*y^2: a segment's cost in O(1)
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
    run: int  # index of the first run of the new level
    diff: float  # relative change of the level (positive: slower)
    band: float  # 99 % half-width of that change (log)
    verdict: str  # SLOWER or FASTER
    environment: tuple[str, ...]  # what else changed across the step; empty: the code's own change


def run_point(rows: list[dict], model: NoiseModel) -> tuple[float, float]:
    """(mean log time, its variance) of one run's repeats of a cell."""
    s = side(rows, model)
    return math.log(s.median_ms), s.rel_se**2 + model.lookup(rows[0]).run_var


def steps(runs: list[list[dict]], model: NoiseModel, tol: float) -> list[Step]:
    """The changes of one series, its runs (each a list of rows) oldest first."""
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
            continue  # a real step, but smaller than compare would report
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
