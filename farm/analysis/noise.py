"""The farm's noise model: how far apart two measurements of identical code land, learned from the dataset itself.

On the log of a cell's time (a relative scale), repeat r of run j measures

    y_jr = mu + R_j + E_jr

  E_jr  repeat level, variance s2: its own batch-to-batch noise plus what changes between a run's repeats (clock and
        temperature state, where fresh inputs landed in memory). Per-batch samples show only the first part; on short
        tensor-core kernels a run's repeats differ 3-10x more than their samples' standard error, so s2 is from repeats.
  R_j   run level, variance v: shared by a run's repeats, so unseen in them
        (module load, process, card, host, driver state).

Learned per class from rows (the dataset's A/A history):
  s2  per cell with 2+ repeats of one run on one card, the sample variance of log medians (n-1 df), pooled per class;
  v   per A/A pair (runs of one commit, i.e. identical code, on one GPU model), per cell both measured:
      (mean_A - mean_B)^2 less what repeats explain (s2_A/n_A + s2_B/n_B), class-averaged, halved, floored at 0. No
      repeats in the class (one per run, as plans/aa-runs.toml makes): none taken off; v holds a run's whole noise
      (`run_holds_repeats`), and no repeat term is added between runs.
  p   paired design (farm/sweep.py --paired): per pair of rows whose identical-code arms (same commit and, for kernels,
      machine code: code_sha256) were timed as series of one interleaved timing in one worker process, the log ratio d
      of their medians. What a run draws (process, placement) and clock and power state, batch by batch, are alike on
      both arms and cancel; the rest, d, is heavy-tailed (H100: |d|'s 99th percentile ~11 robust spreads, 90th ~4). So
      the class keeps a robust scale s = median |d| / 0.6745 (p = s^2), and the GPU model the tails' shape: the 99th and
      90th percentiles of |d| / s over all its A/A pairs (`pair_k`, `pair_k_same`), replacing Student's t quantiles in
      paired verdicts, so identical code is called different ~1 % of the time by construction where history is like the
      comparison. Under MIN_PAIRED_HISTORY pairs, a GPU model's tails are unknown; no paired verdict rests on them.
      Apart from v (the design is in the key): a paired sweep's arms never form an A/A run pair for v.
A class: the cell's GPU model, stage, timing mode (power-capped rows apart: 3-5x noisier) and duration band (noise
depends most on kernel duration). Too little history: at that mode and band, GPU model and family, then GPU model, then
(repeat variance only) any GPU; nothing known: the priors below. Lookups name the class used. A prior run variance is
unmeasured on that GPU model: `compare` (farm/analysis/compare.py) gives no single-run verdict resting on it.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass

# Duration bands (ms per launch): under 30 us mostly fixed cost and jitter, over 3 ms mostly the kernel.
BANDS_MS = (0.03, 0.1, 0.3, 1.0, 3.0)
# Prior weight of a class's variance vs a cell's own repeats, in df (empirical Bayes, as limma's moderated t, Smyth
# 2004): with 2-3 repeats a cell's own variance has 1-2 df and is shrunk to its class's.
PRIOR_DF = 4.0
# Priors where nothing is learned (SDs of log time). Shipped data: repeat SD 0.1-0.5 % (unthrottled) to 1-2 %
# (power-capped tensor-core and vendor cells). The run prior (2x the largest run-to-run excess of walk A's H100 and
# H200 run pairs) just sizes the band shown: H100 A/A over short kernels found 0.5 %+, so no single-run verdict uses it.
PRIOR_REPEAT_SD = 0.01
PRIOR_RUN_SD = 0.002
# Run variance is never borrowed across GPU models: on an H100 two runs of one commit over short kernels (plans/aa.toml)
# differed 0.5 % (robust spread), up to 3-4 % per cell, vs 0.05-0.1 % between walk A's H200 runs in the same bands;
# what a run draws (memory placement, clock state) is the card's and host's own.
RUN_LEVELS = 3  # stage, family, GPU model (class_keys' first three)
MIN_REPEAT_DF = 20  # df a class needs before its repeat variance replaces the next coarser class's
MIN_RUN_PAIRS = 20  # ... and cells of A/A run pairs before its run variance does (and pairs, its paired scale)
MIN_PAIRED_HISTORY = 100  # a GPU model's paired A/A pairs before their tails (pair_k) count as known
TAIL, TAIL_SAME = 0.99, 0.90  # |d| / s percentiles of the difference band and the equivalence test's band


def band(ms: float) -> int:
    """Duration band index of a launch of `ms` milliseconds."""
    return sum(ms > edge for edge in BANDS_MS)


def band_label(i: int) -> str:
    edges = (0.0, *BANDS_MS, math.inf)
    return f"{edges[i]:g}-{edges[i + 1]:g} ms"


@dataclass(frozen=True)
class Noise:
    """The noise of one class of cells (variances of log time)."""

    repeat_var: float
    run_var: float
    repeat_source: str  # source class, or "prior"
    run_source: str
    pair_var: float = PRIOR_RUN_SD**2  # paired: squared robust scale of a pair's log ratio B/A
    pair_source: str = "prior"
    pair_k: float = math.inf  # ... the GPU model's 99th percentile of |d| / scale (inf: too little paired history)
    pair_k_same: float = math.inf  # ... and its 90th

    @property
    def learned(self) -> bool:
        return self.repeat_source != "prior"

    @property
    def run_holds_repeats(self) -> bool:
        """No repeats measured in the class, yet its run variance learned (from one-repeat runs): it holds a run's whole
        noise, repeat level included, so nothing is added for it between runs."""
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
    """Paired-design classes of a row's cell: run levels (never another GPU model's), then the GPU model at every
    duration (some bands have few paired A/A pairs: power-capped cells are mostly one size)."""
    keys = class_keys(r)[:RUN_LEVELS]
    return [*keys, (*keys[-1][:-1], None)]


def describe(key: tuple) -> str:
    level, *parts, b = key
    return f"{level}: {' '.join(str(p) for p in parts if p is not None)} {'every duration' if b is None else band_label(b)}"


def _timed(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r.get("status") == "ok" and r.get("median_ms") and r["median_ms"] > 0]


def identical_code(commit) -> bool:
    """A row's commit names unmodified code: known, not a dirty tree."""
    return isinstance(commit, str) and commit not in ("", "unknown") and not commit.endswith("-dirty")


def _sweep(r: dict):
    """The paired sweep a row's run is an arm of (dataset and RUN_ID of its pair id), or None."""
    pair = r.get("pair")
    return (r.get("dataset"), pair.split("/", 1)[0]) if pair else None


def _capped(*rows: dict) -> bool:
    return any(r.get("throttle_power") for r in rows)


def identical_arms(a: dict, b: dict) -> bool:
    """A pair's two arms ran identical code: one unmodified commit and the same machine code (kernel rows; baselines
    have none: the same library on both arms)."""
    return (
        a.get("git_commit") == b.get("git_commit")
        and identical_code(a.get("git_commit"))
        and a.get("code_sha256") == b.get("code_sha256")
    )


NORMAL_MAD = 0.6745  # median |x| of a standard normal: median |d| / NORMAL_MAD is a robust SD


def _quantile(sorted_xs: list[float], q: float) -> float:
    """Empirical q-quantile: the smallest value with at least q of them at or below it."""
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
        """The model of `rows`. `apart`: the rows of the two sides about to be compared; no pair of their runs is an A/A
        pair, so a difference between them cannot widen the noise judging it."""
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
                        or not identical_code(commit_a)
                        or {run_a, run_b} & sides[0]
                        and {run_a, run_b} & sides[1]
                        or _sweep(first) is not None
                        and _sweep(first) == _sweep(second)  # one paired sweep's two arms: the paired design's
                    ):
                        continue
                    # Repeat variance the runs' means carry; none if unlearned (see Noise.run_holds_repeats).
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
        """The paired design's variance p: per pair of identical code (both arms timed), its squared log ratio."""
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
        ratios: dict[str, list[float]] = defaultdict(list)  # |d| / s per GPU model: its tails' shape
        for cell, d in cells:
            scale, _ = self._pair_scale(cell)
            if scale > 0:
                ratios[cell.get("gpu_model")].append(abs(d) / scale)
        for model, zs in ratios.items():
            zs.sort()
            self._pair_tails[model] = (_quantile(zs, TAIL), _quantile(zs, TAIL_SAME), len(zs))

    def _pair_scale(self, r: dict) -> tuple[float, str]:
        """Robust scale of a pair's log ratio in `r`'s class, and the class; (0, "prior") if no class has MIN_RUN_PAIRS
        pairs (never borrowed across GPU models)."""
        for key in pair_keys(r):
            ds = self._pair.get(key, ())
            if len(ds) >= MIN_RUN_PAIRS:
                return statistics.median(abs(d) for d in ds) / NORMAL_MAD, "paired " + describe(key)
        return 0.0, "prior"

    def lookup(self, r: dict) -> Noise:
        """The noise of row `r`'s cell (gpu_model, family, stage, timing_mode, median_ms)."""
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
        """Every learned class with its repeat and run SDs (relative), for tables and docs/verdicts.md."""
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
