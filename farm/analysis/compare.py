"""Noise-aware comparison of measurements: SAME / FASTER / SLOWER / UNCLEAR per cell, with what else differed.

The noise model (farm/analysis/noise.py) says how far apart identical code lands: a repeat variance s2 (between repeats
of one run) and a run variance v (between runs; no run's own repeats show it), learned from the dataset's A/A history
per GPU model, stage (else family), timing mode and duration band, else a prior. A side is one or more rows of one cell;
its estimate is the mean of its rows' log medians (median_ms reports that geometric mean).

Small samples (2-3 repeats a side): the cell's pooled within-side variance (nA-1 + nB-1 df) is shrunk towards its
class's, s2* = (d0 s2_class + ss) / (d0 + df), d0 = PRIOR_DF (empirical Bayes, as limma's moderated t); the band uses
Student's t with d0 + df df:

    d = mean_B - mean_A                        (log ratio; diff = e^d - 1, positive: B slower)
    var(d) = s2* (1/nA + 1/nB) + 2 v           (v only across runs or cards, not repeats)
    u = t(1 - ALPHA/2, d0 + df) sqrt(var(d))   (the 99 % half-width: `band`)

On the log scale, with `tol` (default 2 %: the smallest change that matters, the regression a farm must catch):
  SLOWER   the band excludes 0 (beyond the noise) and d > tol/2 (FASTER: d < -tol/2);
  SAME     otherwise, if the equivalence test's 90 % band (two one-sided 5 % tests) is within +-tol: no change >= tol;
  UNCLEAR  anything else (the reason says so where not the noise: no samples, one repeat of a cell whose class has no
           history, one run a side where v is the prior: no A/A run pair of that GPU model measured it, and an H100's
           short kernels showed runs 0.5 % to 17 % apart, far beyond any prior). More repeats narrow the repeat term
           (farm/cluster/repeats.py adds them where needed), never 2v.
Why two thresholds from one tol: "call identical code identical and catch a 2 % regression" asks SAME of a 0 % change
and SLOWER of a 2 % one; one threshold cannot: SAME within +-1 % needs a band well under 1 %, which short kernels'
run-to-run noise (0.5-1 % per cell on an H100) does not give, and SLOWER only beyond 2 % catches a true 2 % step at most
half the time. SAME within +-tol rules out a change that matters (by the equivalence test's construction, a true 2 %
step is SAME at most 5 % of the time); SLOWER from tol/2 catches a 2 % step whenever its band is under ~1 %, and a
significant difference under tol/2 (a common shift of clocks or temperature) is left SAME, not reported. A precise
difference between tol/2 and tol is SLOWER: beyond the noise, it is reported before equivalence.

Sides of several runs (k each): the run is the unit. A run's mean carries v + s2/n; the run means' spread
(kA-1 + kB-1 df) is shrunk towards that; var(d) = w* (1/kA + 1/kB). `common_shift` reports the median ratio over all
compared cells with its interval: what a run-level factor shared by every cell moved (verdicts include it). Identical
code is called different at most ALPHA of the time where the model holds; A/A rates per family and GPU model
(`rates`, `farm compare --aa`) show how far it does.

Paired runs (a paired sweep's arms, farm/sweep.py --paired or --base-kernels): each cell's arms are series of ONE
interleaved timing in one worker process (farm/measure/timing.py: batches alternate arm, arm, baseline, the leading arm
alternating with the repeat), each arm its own row. Where both sides' rows of a cell share pair ids, the pair is the
unit, never the run. Per matched pair i, d_i = log B_i - log A_i, the ratio of the arms' medians from that one timing:
what a run draws (process, memory placement, Triton's pick) and the clock, power and thermal state, seen by both arms
batch by batch, cancel, leaving the batches' own scatter and the state's moves between adjacent batches. (Arms timed
sequentially, the first design, let the power state move between them: power-capped cells' pairs 1.9 % apart on an H100,
0.28 % interleaved; such rows never shipped, so every dataset's paired rows are interleaved.) The residue is
heavy-tailed, so the paired noise (noise.py) is a robust scale s per class, learned from paired A/A history (pairs of
identical code) apart from the sequential model (the design is part of the key), and the GPU model's tail percentiles k
of |d| / s over that history replace Student's t:

    d = mean d_i, s* = sqrt((d0 s^2 + ss) / (d0 + n - 1)), u = k99 s* / sqrt(n), SAME's band k90 s* / sqrt(n)

with the same rule. Under 100 paired A/A pairs of the GPU model its tails are unknown, so no verdict rests on them
(UNCLEAR, saying so). Each comparison says which design judged it (`design`: paired, runs, repeats).

Each comparison lists what else differed between its sides (farm/analysis/attribution.py): card, clocks, power and
thermal limits, driver, CUDA, NVRTC, library algorithm, commit; `equal_clocks` compares B at A's SM clock where sound
and says when not.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from farm.analysis import attribution
from farm.analysis.noise import PRIOR_DF, NoiseModel
from farm.measure.stats import student_t_quantile
from farm.measure.stopping import relative_noise

DEFAULT_TOLERANCE = 0.02  # the smallest change that matters: SAME within it, FASTER/SLOWER from REPORTED of it
REPORTED = 0.5  # of tol: the smallest difference called FASTER/SLOWER (catches a 2 % step, not a 0.5 % shift)
ALPHA = 0.01  # two-sided: how often identical code may be called FASTER/SLOWER where the noise model holds
ALPHA_SAME = 0.05  # each side of the equivalence test: how often a difference beyond tol may be called SAME
VERDICTS = ("SAME", "FASTER", "SLOWER", "UNCLEAR")
UNMEASURED_PAIR_NOISE = (
    "paired noise never measured on this GPU model (fewer than 100 pairs of paired A/A in the history): run a "
    "paired sweep of identical code first (farm/sweep.py --paired, plans/aa-paired.toml), and give it with --history"
)
UNMEASURED_RUN_NOISE = (
    "run-to-run noise never measured on this GPU model (no A/A run pair in the history): "
    "compare sides of two runs or more, or give A/A history (plans/aa.toml)"
)


@dataclass(frozen=True)
class Side:
    median_ms: float  # geometric mean of the rows' medians
    rel_se: float  # standard error of the side's log mean (repeat variance over its rows)
    rows: int  # its rows (runs, where the run is the unit)


@dataclass(frozen=True)
class Comparison:
    key: tuple
    a: Side
    b: Side
    diff: float  # (B - A) / A
    band: float  # 99 % half-width of the log difference (~ relative)
    verdict: str
    reason: str = ""  # why UNCLEAR where not the noise alone; else notes (equal clocks)
    context: tuple[str, ...] = ()  # what else differed between the sides
    confounded: bool = False  # something besides code differed: a FASTER/SLOWER may be that
    gpu_model: str | None = None
    family: str | None = None
    noise: str = ""  # classes the repeat and run noise came from
    design: str = "runs"  # what judged it: "paired" (per-pair differences), "runs" (sequential), "repeats" (in a run)


def _timed(rows: list[dict]) -> list[dict]:
    return [
        r
        for r in rows
        if r.get("status") == "ok"
        and r.get("median_ms")
        and r["median_ms"] > 0
        and r.get("samples_ms") is not None
        and len(r["samples_ms"]) > 0
    ]


def _cell(r: dict) -> tuple:
    return (r["stage"], r["m"], r["n"], r["k"])


def verdict(d: float, band: float, tol: float, same_band: float | None = None) -> str:
    """The rule above on log differences (`tol` relative); `same_band`: equivalence test's half-width (else `band`)"""
    same_band = band if same_band is None else same_band
    if d - band > 0 and d > math.log1p(REPORTED * tol):
        return "SLOWER"
    if d + band < 0 and d < math.log1p(-REPORTED * tol):
        return "FASTER"
    if math.log1p(-tol) <= d - same_band and d + same_band <= math.log1p(tol):
        return "SAME"
    return "UNCLEAR"


def _ss(ys: list[float]) -> tuple[float, int]:
    """Sum of squared deviations from the mean and its degrees of freedom."""
    mean = sum(ys) / len(ys)
    return sum((y - mean) ** 2 for y in ys), len(ys) - 1


def _shrunk(repeat_var: float, ss: float, df: int) -> float:
    """A cell's repeat variance shrunk towards its class's: (d0 s2_class + ss) / (d0 + df)."""
    return (PRIOR_DF * repeat_var + ss) / (PRIOR_DF + df)


def _side(ys: list[float], s2: float) -> Side:
    return Side(math.exp(statistics.fmean(ys)), math.sqrt(s2 / len(ys)), len(ys)) if ys else Side(math.nan, math.inf, 0)


def _unclear(key, ya: list[float], yb: list[float], reason: str, **extra) -> Comparison:
    return Comparison(key, _side(ya, math.inf), _side(yb, math.inf), math.nan, math.inf, "UNCLEAR", reason, **extra)


def side(rows: list[dict], model: NoiseModel | None = None) -> Side:
    """One side alone (rows of one cell with timings): geometric mean of its rows' medians; standard error from its
    repeats' spread shrunk towards its class's repeat variance."""
    timed = _timed(rows)
    ys = [math.log(r["median_ms"]) for r in timed]
    return _side(ys, _shrunk((model or NoiseModel()).lookup(timed[0]).repeat_var, *_ss(ys)))


def compare_sides(
    key: tuple,
    rows_a: list[dict],
    rows_b: list[dict],
    tol: float = DEFAULT_TOLERANCE,
    model: NoiseModel | None = None,
    between_runs: bool = True,
    cell_rows: list[dict] | None = None,
    equal_clocks: bool = False,
) -> Comparison:
    """B against A for one cell. `between_runs`: sides from different runs or cards (run variance applies);
    `cell_rows`: every repeat of the cell, for A/A pairs of single repeats (their spread is its repeat variance)."""
    rows_a, rows_b = _timed(rows_a), _timed(rows_b)
    first = (rows_a or rows_b or [{}])[0]
    diffs = attribution.differences(rows_a, rows_b)
    extra = dict(
        context=tuple(text for _, text in diffs),
        confounded=attribution.confounded(diffs),
        gpu_model=first.get("gpu_model"),
        family=first.get("family"),
    )
    ya = [math.log(r["median_ms"]) for r in rows_a]
    yb = [math.log(r["median_ms"]) for r in rows_b]
    if not rows_a or not rows_b:
        return _unclear(key, ya, yb, f"side {'A' if not rows_a else 'B'} has no timed rows with samples", **extra)
    noise = (model or NoiseModel()).lookup(first)
    note = ""
    shift = 0.0
    if equal_clocks:
        shift, note = attribution.log_clock_shift(rows_a, rows_b)
        yb = [y + shift for y in yb]
    pairs = matched_pairs(rows_a, rows_b)
    if between_runs and cell_rows is None and pairs:
        return _compare_pairs(key, [d + shift for d in pairs], (ya, yb), noise, tol, note, extra)
    runs_a, runs_b = _run_means(rows_a, ya), _run_means(rows_b, yb)
    if between_runs and cell_rows is None and len(runs_a) > 1 and len(runs_b) > 1:
        return _compare_run_means(key, runs_a, runs_b, noise, tol, note, extra)
    if cell_rows is not None:
        ss, df = _ss([math.log(r["median_ms"]) for r in _timed(cell_rows)])
    else:
        (ssa, dfa), (ssb, dfb) = _ss(ya), _ss(yb)
        ss, df = ssa + ssb, dfa + dfb
    in_run_noise = between_runs and noise.run_holds_repeats
    if df == 0 and not noise.learned and not in_run_noise:
        return _unclear(
            key,
            ya,
            yb,
            "one repeat a side and no A/A history for this class: its repeat noise is "
            "unknown (measure two repeats or more)",
            noise="prior",
            **extra,
        )
    s2 = _shrunk(0.0 if in_run_noise else noise.repeat_var, ss, df)
    within = [relative_noise(r["samples_ms"], r.get("batches")) for r in (*rows_a, *rows_b)]
    s2 = max(
        s2, statistics.fmean(w * w for w in within if math.isfinite(w)) if any(map(math.isfinite, within)) else 0.0
    )
    var_d = s2 * (1 / len(ya) + 1 / len(yb)) + (2 * noise.run_var if between_runs else 0.0)
    d = statistics.fmean(yb) - statistics.fmean(ya)
    band = student_t_quantile(1 - ALPHA / 2, PRIOR_DF + df) * math.sqrt(var_d)
    same_band = student_t_quantile(1 - ALPHA_SAME, PRIOR_DF + df) * math.sqrt(var_d)
    a, b = _side(ya, s2), _side(yb, s2)
    source = ("repeat: within the run noise" if in_run_noise else noise.repeat_source) + (
        f"; run: {noise.run_source}" if between_runs else ""
    )
    call = verdict(d, band, tol, same_band)
    if between_runs and noise.run_source == "prior":
        call, note = "UNCLEAR", "; ".join(filter(None, (note, UNMEASURED_RUN_NOISE)))
    design = "runs" if between_runs else "repeats"
    return Comparison(key, a, b, math.expm1(d), band, call, note, noise=source, design=design, **extra)


def matched_pairs(rows_a: list[dict], rows_b: list[dict]) -> list[float]:
    """Per pair id both sides hold (a paired sweep's arms), log B - log A; empty for sequential runs."""
    a = {(r.get("dataset"), r["pair"]): r for r in rows_a if r.get("pair")}
    return [
        math.log(r["median_ms"]) - math.log(a[(r.get("dataset"), r["pair"])]["median_ms"])
        for r in rows_b
        if r.get("pair") and (r.get("dataset"), r["pair"]) in a
    ]


def _compare_pairs(
    key, ds: list[float], ys: tuple[list[float], list[float]], noise, tol: float, note: str, extra: dict
) -> Comparison:
    """Paired arms, the pair the unit: the class's robust scale s with the cell's pairs' spread (n-1 df) shrunk
    towards it, over sqrt(n), times the GPU model's tail percentiles of |d| / s from paired A/A history (noise.py)."""
    n = len(ds)
    ss, df = _ss(ds)
    measured = noise.pair_source != "prior"
    s2 = (PRIOR_DF * noise.pair_var + ss) / (PRIOR_DF + df)
    se = math.sqrt(s2 / n)
    band, same_band = noise.pair_k * se, noise.pair_k_same * se
    d = statistics.fmean(ds)
    a, b = (Side(math.exp(statistics.fmean(y)), math.sqrt(s2 / 2), len(y)) for y in ys)
    call = verdict(d, band, tol, same_band) if measured else "UNCLEAR"
    if not measured:
        note = "; ".join(filter(None, (note, UNMEASURED_PAIR_NOISE)))
    source = f"{n} pair{'s' if n > 1 else ''}: {noise.pair_source}"
    return Comparison(key, a, b, math.expm1(d), band, call, note, noise=source, design="paired", **extra)


def _run_means(rows: list[dict], ys: list[float]) -> list[tuple[float, int]]:
    """Per run of a side (dataset, run id, card): its log medians' mean and repeat count."""
    runs: dict[tuple, list[float]] = defaultdict(list)
    for r, y in zip(rows, ys):
        runs[(r.get("dataset"), r.get("run_id"), r.get("gpu_uuid"))].append(y)
    return [(statistics.fmean(v), len(v)) for v in runs.values()]


def _compare_run_means(
    key, runs_a: list[tuple[float, int]], runs_b: list[tuple[float, int]], noise, tol: float, note: str, extra: dict
) -> Comparison:
    """Sides of 2+ runs each, the run the unit: each run's mean carries v + s2/n (run level plus its n repeats'
    share); the run means' spread (kA-1 + kB-1 df) is shrunk towards that, as repeats towards their class's; var(d)
    = w* (1/kA + 1/kB): run-level noise, which no repeats in one run average away, shrinks with more runs."""
    ma, mb = [m for m, _ in runs_a], [m for m, _ in runs_b]
    repeats = statistics.fmean(n for _, n in (*runs_a, *runs_b))
    (ssa, dfa), (ssb, dfb) = _ss(ma), _ss(mb)
    d0 = 0.0 if noise.run_source == "prior" else PRIOR_DF  # an unmeasured prior for this GPU model carries no weight
    w = (d0 * (noise.run_var + (0.0 if noise.run_holds_repeats else noise.repeat_var / repeats)) + ssa + ssb) / (
        d0 + dfa + dfb
    )
    var_d = w * (1 / len(ma) + 1 / len(mb))
    d = statistics.fmean(mb) - statistics.fmean(ma)
    band = student_t_quantile(1 - ALPHA / 2, d0 + dfa + dfb) * math.sqrt(var_d)
    same_band = student_t_quantile(1 - ALPHA_SAME, d0 + dfa + dfb) * math.sqrt(var_d)
    a, b = _side(ma, w), _side(mb, w)
    source = f"runs {len(ma)} vs {len(mb)}: {noise.repeat_source}; run: {noise.run_source}"
    return Comparison(key, a, b, math.expm1(d), band, verdict(d, band, tol, same_band), note, noise=source, **extra)


def compare_rows(
    rows_a: list[dict],
    rows_b: list[dict],
    tol: float = DEFAULT_TOLERANCE,
    model: NoiseModel | None = None,
    equal_clocks: bool = False,
) -> list[Comparison]:
    """B's rows against A's (two runs, datasets, commits...), per (gpu_model, stage, shape) both measured, each side's
    rows of a cell pooled; noise model learned from both sides' rows unless given."""
    model = model or NoiseModel.learn([*rows_a, *rows_b], apart=(rows_a, rows_b))
    sides: dict[tuple, tuple[list, list]] = defaultdict(lambda: ([], []))
    for i, rows in enumerate((rows_a, rows_b)):
        for r in rows:
            if r.get("status") == "ok":
                sides[(r["gpu_model"], *_cell(r))][i].append(r)
    return [
        compare_sides(key, a, b, tol, model, equal_clocks=equal_clocks)
        for key, (a, b) in sorted(sides.items(), key=lambda kv: str(kv[0]))
        if a and b
    ]


def compare_runs(
    rows: list[dict],
    run_a: str,
    run_b: str,
    tol: float = DEFAULT_TOLERANCE,
    model: NoiseModel | None = None,
    equal_clocks: bool = False,
) -> list[Comparison]:
    """Run B against run A, per (gpu_model, stage, shape) present in both; noise learned from all `rows`."""
    rows_a, rows_b = [r for r in rows if r["run_id"] == run_a], [r for r in rows if r["run_id"] == run_b]
    return compare_rows(rows_a, rows_b, tol, model or NoiseModel.learn(rows, apart=(rows_a, rows_b)), equal_clocks)


def compare_repeats(
    rows: list[dict], run: str, tol: float = DEFAULT_TOLERANCE, model: NoiseModel | None = None
) -> list[Comparison]:
    """A/A: every pair of repeats of each cell on each GPU of one run, each repeat its own side."""
    model = model or NoiseModel.learn(rows)
    cells: dict[tuple, list[dict]] = defaultdict(list)
    for r in _timed(rows):
        if r["run_id"] == run:
            cells[(r["gpu_uuid"], *_cell(r))].append(r)
    out = []
    for key, rs in sorted(cells.items(), key=lambda kv: str(kv[0])):
        rs.sort(key=lambda r: r["repeat"])
        out += [
            compare_sides(
                (*key, f"r{x['repeat']}~r{y['repeat']}"), [x], [y], tol, model, between_runs=False, cell_rows=rs
            )
            for x, y in itertools.combinations(rs, 2)
        ]
    return out


def compare_gpus(
    rows: list[dict], run: str, tol: float = DEFAULT_TOLERANCE, model: NoiseModel | None = None
) -> list[Comparison]:
    """GPU-to-GPU: every pair of same-model GPUs of one run, per cell (repeats pooled per GPU)."""
    model = model or NoiseModel.learn(rows)
    cells: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in _timed(rows):
        if r["run_id"] == run:
            cells[(r["gpu_model"], *_cell(r))][r["gpu_uuid"]].append(r)
    out = []
    for key, by_gpu in sorted(cells.items(), key=lambda kv: str(kv[0])):
        for ua, ub in itertools.combinations(sorted(by_gpu), 2):
            out.append(compare_sides((*key, f"{ua[-8:]}~{ub[-8:]}"), by_gpu[ua], by_gpu[ub], tol, model))
    return out


def summary(comparisons: list[Comparison], min_ms: float = 0.1) -> dict:
    """Verdict counts, false-difference and UNCLEAR rates, confounded differences, median |diff|: all and >= min_ms."""
    counts = {v: sum(c.verdict == v for c in comparisons) for v in VERDICTS}
    n = len(comparisons)
    diffs = [abs(c.diff) for c in comparisons if math.isfinite(c.diff)]
    long = [abs(c.diff) for c in comparisons if math.isfinite(c.diff) and min(c.a.median_ms, c.b.median_ms) >= min_ms]
    return {
        "comparisons": n,
        **counts,
        "difference_rate": (counts["FASTER"] + counts["SLOWER"]) / n if n else None,
        "unclear_rate": counts["UNCLEAR"] / n if n else None,
        "differences_confounded": sum(c.confounded and c.verdict in ("FASTER", "SLOWER") for c in comparisons),
        "designs": {d: sum(c.design == d for c in comparisons) for d in sorted({c.design for c in comparisons})},
        "median_abs_diff": statistics.median(diffs) if diffs else None,
        f"median_abs_diff_ge_{min_ms:g}ms": statistics.median(long) if long else None,
        f"cells_ge_{min_ms:g}ms": len(long),
    }


def common_shift(comparisons: list[Comparison], level: float = 1 - ALPHA) -> dict | None:
    """B's shift against A shared by every cell: median log ratio over compared cells, with a distribution-free
    confidence interval (median's order statistics, normal approximation to the binomial). Run-level factors (clocks,
    temperature, host or driver state, a change slowing every kernel alike) show here. None under 10 cells (too few
    for the interval)."""
    ds = sorted(math.log1p(c.diff) for c in comparisons if math.isfinite(c.diff))
    n = len(ds)
    if n < 10:
        return None
    half = statistics.NormalDist().inv_cdf(1 - (1 - level) / 2) * math.sqrt(n) / 2
    lo, hi = max(0, math.floor(n / 2 - half)), min(n - 1, math.ceil(n / 2 + half) - 1)
    return {
        "cells": n,
        "shift": math.expm1(statistics.median(ds)),
        "low": math.expm1(ds[lo]),
        "high": math.expm1(ds[hi]),
        "level": level,
    }


DESIGNS = {
    "paired": "paired: per-pair log ratios of the two arms' medians, timed as series of one interleaved timing; noise "
    "from paired A/A history",
    "runs": "sequential runs: each side's repeats and a run-to-run variance from A/A run pairs",
    "repeats": "repeats within one run",
}


def format_designs(designs: Iterable[str]) -> str:
    """Which noise model (paired or sequential) judged the cells, from each cell's design."""
    counts = Counter(designs)
    return "Noise model: " + "; ".join(f"{counts[d]} cells {text}" for d, text in DESIGNS.items() if counts[d]) + "."


def format_shift(shift: dict | None) -> str:
    if shift is None:
        return "Common shift: fewer than 10 cells compared, none estimated."
    way = "slower" if shift["shift"] > 0 else "faster"
    return (
        f"Common shift: B is {100 * abs(shift['shift']):.2f} % {way} than A over all {shift['cells']} cells (median ratio; "
        f"{100 * shift['level']:.0f} % interval {100 * shift['low']:+.2f} % to {100 * shift['high']:+.2f} %).\n  A shift shared by "
        "every cell (clocks, temperature, host or driver state, or a change that slows every kernel alike) shows here; "
        "the verdicts per cell include it."
    )


def rates(comparisons: list[Comparison]) -> list[dict]:
    """Per GPU model and family: comparisons, verdict counts, false-difference (FASTER + SLOWER: all false on A/A
    data) and UNCLEAR rates: how far a verdict on that family can be trusted."""
    groups: dict[tuple, list[Comparison]] = defaultdict(list)
    for c in comparisons:
        groups[(c.gpu_model or "", c.family or "")].append(c)
    out = []
    for (model, family), cs in sorted(groups.items()):
        s = summary(cs)
        out.append(
            {
                "gpu_model": model,
                "family": family,
                "comparisons": s["comparisons"],
                **{v: s[v] for v in VERDICTS},
                "difference_rate": s["difference_rate"],
                "unclear_rate": s["unclear_rate"],
            }
        )
    return out


def format_rates(table: list[dict]) -> str:
    lines = [
        f"{'GPU model':<18} {'family':<14} {'pairs':>6} {'SAME':>6} {'FAST':>5} {'SLOW':>5} {'UNCL':>5} {'diff rate':>10} {'unclear':>8}"
    ]
    for r in table:
        lines.append(
            f"{r['gpu_model']:<18} {r['family']:<14} {r['comparisons']:>6} {r['SAME']:>6} {r['FASTER']:>5} {r['SLOWER']:>5} "
            f"{r['UNCLEAR']:>5} {100 * r['difference_rate']:>9.2f}% {100 * r['unclear_rate']:>7.1f}%"
        )
    return "\n".join(lines)


def format_table(comparisons: list[Comparison]) -> str:
    lines = [f"{'cell':<58} {'A ms':>10} {'B ms':>10} {'diff':>8} {'+-':>7}  verdict  (what else differed; why)"]
    for c in comparisons:
        notes = "; ".join([*c.context, *([c.reason] if c.reason else [])])
        lines.append(
            f"{' '.join(map(str, c.key)):<58} {c.a.median_ms:>10.4f} {c.b.median_ms:>10.4f} "
            f"{100 * c.diff:>+7.2f}% {100 * c.band:>6.2f}%  {c.verdict}{'*' if c.confounded and c.verdict in ('FASTER', 'SLOWER') else ''}"
            + (f"  ({notes})" if notes else "")
        )
    return "\n".join(lines)
