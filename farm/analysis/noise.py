"""The farm's noise model: how far apart two measurements of identical code land, learned from the dataset itself.

On the log of a cell's time (a relative scale), repeat r of run j measures

    y_jr = mu + R_j + E_jr

  E_jr  repeat level, variance s2: the repeat's own batch-to-batch noise plus all that changes between two repeats of
        one run (clock and temperature state, where the fresh inputs landed in memory). The rows' per-batch samples
        show only the first part; on short tensor-core kernels the repeats of one run differ 3-10x more than their
        samples' standard error says, so s2 is learned from the repeats, not from the samples.
  R_j   run level, variance v: what every repeat of one run shares and its repeats cannot show (module load, the
        process, the card and host it ran on, the driver's state).

Learned from rows (the dataset's A/A history), per class of cells:
  s2  per cell with two or more repeats of one run on one card, the sample variance of the log medians (n-1 degrees
      of freedom), pooled over the class;
  v   per pair of runs of the same commit on the same GPU model (identical code: an A/A pair), per cell both
      measured: (mean_A - mean_B)^2 less what the repeats explain (s2_A/n_A + s2_B/n_B), averaged over the class,
      halved, and never below 0. Where the class has no repeats measured (runs of one repeat each, as
      plans/aa-runs.toml makes), nothing is taken off: v then holds a run's whole noise (`run_holds_repeats`), and
      a comparison between runs adds no repeat term for it.
  p   paired design (farm/sweep.py --paired): per pair of rows whose arms of identical code (the same commit and, for
      kernels, the same machine code: code_sha256) were timed as series of one interleaved timing in one worker
      process, the log ratio d of their medians. What a run draws (process, placement) and the clock and power state,
      batch by batch, are the same on both arms of a pair and cancel; d is what is left, and it is heavy-tailed (on an
      H100, |d|'s 99th percentile is about 11 robust spreads, its 90th about 4). So the class keeps a robust scale, s = median |d| / 0.6745 (p = s^2), and the GPU model the
      shape of the tails: the 99th and 90th percentiles of |d| / s over all its A/A pairs (`pair_k`, `pair_k_same`),
      which replace Student's t quantiles for paired verdicts, so that identical code is called different about 1 % of
      the time by construction where the history is like the comparison. Fewer than MIN_PAIRED_HISTORY pairs of a
      GPU model: its tails are not known, and no paired verdict rests on them. Kept apart from v (the design is part
      of the key): two arms of one paired sweep never count as an A/A run pair for v.
A class is the GPU model, stage, timing mode (power-capped rows apart: they are 3-5x noisier) and duration band of
the cell (noise depends most on how short the kernel is). Where that class has too little history: the GPU model and
family, then the GPU model, then (the repeat variance only) any GPU, at that mode and band; where nothing is
known, the priors below. A lookup says which class it used. A run variance that is the prior was never measured for
that GPU model: `compare` gives no verdict between single runs that rests on it (farm/analysis/compare.py).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

# Duration bands (ms of one launch): below 30 us a launch is mostly fixed cost and jitter, above 3 ms it is mostly the kernel.
BANDS_MS = (0.03, 0.1, 0.3, 1.0, 3.0)
# Prior weight of a class's variance against a cell's own repeats, in degrees of freedom (empirical Bayes, as limma's
# moderated t, Smyth 2004): with 2-3 repeats a cell's own variance has 1-2 df and is shrunk towards its class's.
PRIOR_DF = 4.0
# Where nothing is learned: repeat and run standard deviations of log time. The shipped data show a repeat SD of
# 0.1-0.5 % (unthrottled cells) to 1-2 % (power-capped tensor-core and vendor cells). The run prior (twice the largest
# run-to-run excess of walk A's H100 and H200 run pairs) only sizes the band shown: the H100 A/A over short kernels
# found 0.5 % and more, so no single-run verdict rests on it.
PRIOR_REPEAT_SD = 0.01
PRIOR_RUN_SD = 0.002
# The run variance is never borrowed from another GPU model: on an H100 two runs of one commit over short kernels
# (plans/aa.toml) differed by 0.5 % (robust spread) and up to 3-4 % per cell, against 0.05-0.1 % between the H200 runs
# of walk A in the same duration bands; what a run draws (memory placement, clock state) is the card's and host's own.
RUN_LEVELS = 3  # stage, family, GPU model (class_keys' first three)
MIN_REPEAT_DF = 20  # history a class needs before its repeat variance replaces the next coarser class's
MIN_RUN_PAIRS = 20  # ... and cells of A/A run pairs before its run variance does (and pairs, its paired scale)
MIN_PAIRED_HISTORY = 100  # paired A/A pairs of a GPU model before their tails (pair_k) are taken as known
TAIL, TAIL_SAME = 0.99, 0.90  # the |d| / s percentiles of the difference band and of the equivalence test's band


def band(ms: float) -> int:
    """Index of the duration band of a launch of `ms` milliseconds."""
    return sum(ms > edge for edge in BANDS_MS)


def band_label(i: int) -> str:
    edges = (0.0, *BANDS_MS, math.inf)
    return f"{edges[i]:g}-{edges[i + 1]:g} ms"


@dataclass(frozen=True)
class Noise:
    """The noise of one class of cells (variances of log time)."""

    repeat_var: float
    run_var: float
    repeat_source: str  # which class it came from, or "prior"
    run_source: str
    pair_var: float = PRIOR_RUN_SD**2  # paired design: the squared robust scale of one pair's log ratio B/A
    pair_source: str = "prior"
    pair_k: float = math.inf  # ... the GPU model's 99th percentile of |d| / scale (inf: too little paired history)
    pair_k_same: float = math.inf  # ... and its 90th

    @property
    def learned(self) -> bool:
        return self.repeat_source != "prior"

    @property
    def run_holds_repeats(self) -> bool:
        """No repeats measured in the class, its run variance learned all the same (from runs of one repeat): that
        variance holds a run's whole noise, repeat level included, so between runs nothing is to be added for it."""
        return self.repeat_source == "prior" and self.run_source != "prior"


def class_keys(r: dict) -> list[tuple]:
    """The classes of a row's cell, most specific first."""
    mode = (r.get("timing_mode") or "hot") + (" power-capped" if r.get("throttle_power") else "")
    b, model = band(r["median_ms"]), r.get("gpu_model")
    return [
        ("stage", model, r.get("stage"), mode, b),
        ("family", model, r.get("family"), mode, b),
        ("gpu model", model, mode, b),
        ("any GPU", mode, b),
    ]


def pair_keys(r: dict) -> list[tuple]:
    """The paired design's classes of a row's cell: the run levels (never another GPU model's), then the GPU model at
    every duration (few paired A/A pairs fall in some bands: power-capped cells are mostly of one size)."""
    keys = class_keys(r)[:RUN_LEVELS]
    return [*keys, (*keys[-1][:-1], None)]


def describe(key: tuple) -> str:
    level, *parts, b = key
    return f"{level}: {' '.join(str(p) for p in parts if p is not None)} {'every duration' if b is None else band_label(b)}"


def _timed(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r.get("status") == "ok" and r.get("median_ms") and r["median_ms"] > 0]


def _identical_code(commit) -> bool:
    return isinstance(commit, str) and commit not in ("", "unknown") and not commit.endswith("-dirty")


def _sweep(r: dict):
    """The paired sweep a row's run is an arm of (dataset and RUN_ID of its pair id), or None."""
    pair = r.get("pair")
    return (r.get("dataset"), pair.split("/", 1)[0]) if pair else None


def _capped(*rows: dict) -> bool:
    return any(r.get("throttle_power") for r in rows)


def identical_arms(a: dict, b: dict) -> bool:
    """The two arms of a pair ran identical code: one commit, not modified, and the same machine code (kernel rows;
    baselines have none: the same library on both arms)."""
    return (
        a.get("git_commit") == b.get("git_commit")
        and _identical_code(a.get("git_commit"))
        and a.get("code_sha256") == b.get("code_sha256")
    )


NORMAL_MAD = 0.6745  # median |x| of a standard normal: median |d| / NORMAL_MAD is a robust standard deviation


def _quantile(sorted_xs: list[float], q: float) -> float:
    """The empirical q-quantile (the smallest value with at least q of them at or below it)."""
    return sorted_xs[min(len(sorted_xs) - 1, max(0, math.ceil(q * len(sorted_xs)) - 1))]


def _variance(ys: list[float]) -> float:
    mean = sum(ys) / len(ys)
    return sum((y - mean) ** 2 for y in ys) / (len(ys) - 1)


class NoiseModel:
    """Repeat and run variances per class, learned from rows; `lookup` answers for any cell."""

    def __init__(self) -> None:
        self._repeat: dict[tuple, list[float]] = defaultdict(lambda: [0.0, 0.0])  # class -> [sum df*s2, sum df]
        self._run: dict[tuple, list[float]] = defaultdict(lambda: [0.0, 0.0])  # class -> [sum excess, pairs]
        self._pair: dict[tuple, list[float]] = defaultdict(list)  # class -> log ratios of A/A pairs
        self._pair_tails: dict[str, tuple[float, float, int]] = {}  # GPU model -> (k 99 %, k 90 %, pairs)

    @classmethod
    def learn(cls, rows: list[dict], apart: tuple[list[dict], list[dict]] | None = None) -> NoiseModel:
        """The model of `rows`. `apart`: the two sides about to be compared (their rows): a pair of their runs is never
        taken as an A/A pair, so that a difference between them cannot widen the noise that judges it."""
        model = cls()
        sides = [{(r.get("dataset"), r["run_id"]) for r in side} for side in apart] if apart else [set(), set()]
        cells: dict[tuple, list[dict]] = defaultdict(list)
        for r in _timed(rows):
            cells[
                (
                    r.get("dataset"),
                    r["run_id"],
                    r.get("gpu_uuid"),
                    r["stage"],
                    r["m"],
                    r["n"],
                    r["k"],
                    r.get("timing_mode"),
                )
            ].append(r)
        runs: dict[tuple, list[tuple]] = defaultdict(list)  # (model, cell) -> [(commit, ys, s2 or None)] per run
        per_run: dict[tuple, list[float]] = defaultdict(list)
        for (dset, run, _uuid, *cell), rs in cells.items():
            ys = [math.log(r["median_ms"]) for r in rs]
            per_run[(dset, run, rs[0].get("gpu_model"), *cell)] += ys
            if len(ys) >= 2:
                for key in class_keys(
                    {**rs[0], "median_ms": math.exp(sum(ys) / len(ys))}
                ):  # the cell's band, not a row's
                    acc = model._repeat[key]
                    acc[0] += (len(ys) - 1) * _variance(ys)
                    acc[1] += len(ys) - 1
        firsts = {
            (
                r.get("dataset"),
                r["run_id"],
                r.get("gpu_model"),
                r["stage"],
                r["m"],
                r["n"],
                r["k"],
                r.get("timing_mode"),
            ): r
            for r in _timed(rows)
        }
        for (dset, run, gpu_model, *cell), ys in per_run.items():
            first = {**firsts[(dset, run, gpu_model, *cell)], "median_ms": math.exp(sum(ys) / len(ys))}
            runs[(gpu_model, *cell)].append(((dset, run), first.get("git_commit"), ys, first))
        for measured in runs.values():
            for i, (run_a, commit_a, ya, first) in enumerate(measured):
                for run_b, commit_b, yb, second in measured[i + 1 :]:
                    if (
                        commit_a != commit_b
                        or not _identical_code(commit_a)
                        or {run_a, run_b} & sides[0]
                        and {run_a, run_b} & sides[1]
                        or _sweep(first) is not None
                        and _sweep(first) == _sweep(second)  # two arms of one paired sweep: the paired design's
                    ):
                        continue
                    # What the runs' means carry of the class's repeat variance; where none is learned (runs of one
                    # repeat each), nothing: the run variance then holds all of a run's noise, repeat level included.
                    noise = model.lookup(first)
                    repeat_var = noise.repeat_var if noise.learned else 0.0
                    excess = (sum(ya) / len(ya) - sum(yb) / len(yb)) ** 2 - repeat_var * (1 / len(ya) + 1 / len(yb))
                    for key in class_keys(first):
                        acc = model._run[key]
                        acc[0] += excess
                        acc[1] += 1
        model._learn_pairs(rows, sides)
        return model

    def _learn_pairs(self, rows: list[dict], sides: list[set]) -> None:
        """The paired design's variance p: per pair of identical code (both arms' rows timed), its squared log ratio."""
        pairs: dict[tuple, dict[str, dict]] = defaultdict(dict)
        for r in _timed(rows):
            if r.get("pair") and r.get("arm"):
                pairs[(r.get("dataset"), r["pair"])][r["arm"]] = r
        cells = []
        for arms in pairs.values():
            a, b = arms.get("a"), arms.get("b")
            if a is None or b is None or not identical_arms(a, b):
                continue
            if {(a.get("dataset"), a["run_id"]), (b.get("dataset"), b["run_id"])} & sides[0] and {
                (a.get("dataset"), a["run_id"]),
                (b.get("dataset"), b["run_id"]),
            } & sides[1]:
                continue  # the pair being compared judges nothing of its own
            d = math.log(b["median_ms"]) - math.log(a["median_ms"])
            cell = {**a, "median_ms": math.sqrt(a["median_ms"] * b["median_ms"]), "throttle_power": _capped(a, b)}
            cells.append((cell, d))
            for key in pair_keys(cell):
                self._pair[key].append(d)
        ratios: dict[str, list[float]] = defaultdict(list)  # |d| / s per GPU model: the shape of its tails
        for cell, d in cells:
            scale, _ = self._pair_scale(cell)
            if scale > 0:
                ratios[cell.get("gpu_model")].append(abs(d) / scale)
        for model, zs in ratios.items():
            zs.sort()
            self._pair_tails[model] = (_quantile(zs, TAIL), _quantile(zs, TAIL_SAME), len(zs))

    def _pair_scale(self, r: dict) -> tuple[float, str]:
        """The robust scale of a pair's log ratio in the class of `r`, and the class; (0, "prior") where none has
        MIN_RUN_PAIRS pairs (never borrowed from another GPU model)."""
        for key in pair_keys(r):
            ds = self._pair.get(key, ())
            if len(ds) >= MIN_RUN_PAIRS:
                return statistics.median(abs(d) for d in ds) / NORMAL_MAD, "paired " + describe(key)
        return 0.0, "prior"

    def lookup(self, r: dict) -> Noise:
        """The noise of the cell of row `r` (gpu_model, family, stage, timing_mode, median_ms)."""
        repeat_var, repeat_source = PRIOR_REPEAT_SD**2, "prior"
        for key in class_keys(r):
            total, df = self._repeat.get(key, (0.0, 0.0))
            if df >= MIN_REPEAT_DF:
                repeat_var, repeat_source = total / df, describe(key)
                break
        run_var, run_source = PRIOR_RUN_SD**2, "prior"
        for key in class_keys(r)[:RUN_LEVELS]:
            total, pairs = self._run.get(key, (0.0, 0.0))
            if pairs >= MIN_RUN_PAIRS:
                run_var, run_source = max(0.0, total / pairs / 2), describe(key)
                break
        scale, pair_source = self._pair_scale(r)
        k, k_same, pairs = self._pair_tails.get(r.get("gpu_model"), (math.inf, math.inf, 0))
        if scale <= 0 or pairs < MIN_PAIRED_HISTORY:
            scale, pair_source, k, k_same = PRIOR_RUN_SD, "prior", math.inf, math.inf
        return Noise(repeat_var, run_var, repeat_source, run_source, scale**2, pair_source, k, k_same)

    def classes(self) -> list[dict]:
        """Every learned class with its repeat and run standard deviations (relative), for tables and docs/verdicts.md."""
        out = []
        for key in sorted(set(self._repeat) | set(self._run) | set(self._pair), key=str):
            total, df = self._repeat.get(key, (0.0, 0.0))
            excess, pairs = self._run.get(key, (0.0, 0.0))
            ds = self._pair.get(key, [])
            out.append(
                {
                    "class": describe(key),
                    "repeat_sd": math.sqrt(total / df) if df else None,
                    "repeat_df": df,
                    "run_sd": math.sqrt(max(0.0, excess / pairs / 2)) if pairs else None,
                    "run_pairs": pairs,
                    "pair_scale": statistics.median(abs(d) for d in ds) / NORMAL_MAD if ds else None,
                    "pairs": len(ds),
                }
            )
        return out
