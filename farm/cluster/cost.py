"""Expected time of a cell, before it runs: what orders queues longest first, sizes batches and makes the ETA.

A cell costs a fixed part (inputs, the FP64 check, host work), a few untimed launches
(verification, warm-up) and its timed batches: at least ten launches and 0.2 s
(farm/measure/stopping.py), for slow kernels (few batches) at most about MAX_TIMED_S. A launch takes flops / rate,
the stage's rate taken, best first, from earlier ok rows of the same GPU model (their
median_ms), else from a write-up's published time when it was measured on this GPU model
(walks A, B and C on an RTX 3050 Laptop, RTX 5060 Laptop and RTX 4090: a data-centre prior
would price a laptop's cells 10x too short), else from the write-up's published
% of its baseline times a per-precision rate of that baseline, else a per-family rate. The scale matters little: the
ETA and batch sizes calibrate it on the cells measured so far (Eta).
A paired cell times its two arms and the baseline as one interleaved timing: its launches cost 3/2 of an unpaired
cell's (three series against two), its floor of timed seconds is the same.
Given the plan's [measure] options, a cell the timer will run in blocks (every cell where block_s > 0; where
cap_block_s > 0, one likely_capped) costs its blocks instead of its batches: each series runs two blocks at least
(A B A B), so a capped kernel cell of 1 s blocks takes about 4 s, 10x what its launches would.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from farm.cells import Cell
from farm.data.published import published_rows
from farm.measure.cell_timer import MeasureOptions
from farm.measure.device import model_from_name
from farm.measure.timing import CAP_PROBE_S, MIN_BLOCK_ROUNDS, TimingConfig
from kernels.stage import Measured

CELL_OVERHEAD_S = 0.13
UNTIMED_LAUNCHES = 4
TIMED_LAUNCHES = 10
MIN_TIMED_S, MAX_TIMED_S = 0.2, 7.0
# Sustained FLOP/s of the vendor baseline per input precision, H100/H200 class.
BASELINE_RATE = {
    "fp32": 50e12,
    "tf32": 350e12,
    "fp16": 600e12,
    "bf16": 600e12,
    "fp8_e4m3": 1200e12,
    "fp8_e4m3_e5m2": 1200e12,
}
# Stages with no published figure: their family's typical share of the baseline (walk D: its seven stages' mean at
# 8192^3 in the reference runs, 0.37-1.02; TF32: its four on an H100 at 8192^3, 0.51-0.95; hopper_fp8: its first
# five on an H100 at 4096^3 and 8192^3, 0.66-1.02, mean 0.90; the families' READMEs).
FAMILY_SHARE = {
    "baseline": 1.0,
    "simt_fp32": 0.7,
    "simt_fp32_c": 0.5,
    "tf32": 0.3,
    "half_c": 0.25,
    "hopper_d": 0.75,
    "hopper_tf32": 0.8,
    "hopper_fp8": 0.9,
}
DEFAULT_SHARE = 0.3
# Which cells the timer finds at the power cap, and so times in blocks of cap_block_s (farm/measure/timing.py): those
# that fill a data-centre GPU with tensor-core work. In the runs in blocks of 1 s on H100s and H200s
# (h100-llmb in datasets/; h100-cubesc at 6180ce8; h100-llmf8b at 213070b; d18, f10, walkFe5m2 and h100-llmf8c's first 253
# cells at 593e0b6; h100-f09, h200-f09, h200-f09b and h200-cubesb's first 83 at 273d383: walk D and F, cuBLAS,
# cuBLASLt and torch._scaled_mm in BF16, FP16 and FP8; every cell, or every kernel cell where a baseline's own cell was still timed batch by batch),
# 1,186 of the 1,192 cells of 8 GFLOP or more went to blocks, and 15 of the 760 smaller ones: decoding shapes
# (M = 1, 16) are memory-bound (16 x 8192 x 28672, 7.5 GFLOP: 560 W of 700) and small grids leave SMs idle. TF32
# went to blocks too (hopper_tf32 04 at 4096^3 and 8192^3, kernels/hopper_tf32/README.md); FP32 draws less (walk A at
# 4096^3: none in blocks). GeForce boards have no runs in blocks: priced batch by batch.
CAPPED_DTYPES = frozenset({"tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e4m3_e5m2"})
CAPPED_MIN_FLOPS = 8e9
# Eta: how much evidence (seconds of repeated cells) the prior "a repeat takes what its first took" is worth.
AGAIN_PRIOR_S = 5.0
# Eta: how fast the recent sizes' actual/expected forgets older cells (per cell priced by its size).
RECENT_DECAY = 0.8


def _prior_rate(stage: Measured) -> float:
    base = BASELINE_RATE.get(stage.dtype, BASELINE_RATE["fp32"])
    published = getattr(stage, "published", None)
    if published and published.pct_of_baseline:
        return base * published.pct_of_baseline / 100
    return base * FAMILY_SHARE.get(stage.family, DEFAULT_SHARE)


def likely_capped(stage: Measured, cell: Cell, gpu_model: str) -> bool:
    """Whether the timer will find `cell` at the power cap on `gpu_model` (CAPPED_MIN_FLOPS)."""
    return (
        not gpu_model.startswith("GeForce")
        and stage.dtype in CAPPED_DTYPES
        and stage.flops(cell.m, cell.n, cell.k) >= CAPPED_MIN_FLOPS
    )


def blocks_per_series(launch_s: float, series: int, block_s: float, timing: TimingConfig) -> int:
    """Blocks each series of a cell runs: MIN_BLOCK_ROUNDS, more where a block's kept half holds fewer than min_samples / 2
    batches (slow launches), until the round that passes max_time_s."""
    kept = 1 + int(block_s / 2 / max(launch_s, timing.target_batch_ms / 1e3))  # batches after the settling half
    for_samples = math.ceil(timing.stopping.min_samples / kept)
    for_time = math.ceil(timing.stopping.max_time_s / (series * block_s))
    return max(MIN_BLOCK_ROUNDS, min(for_samples, for_time))


@functools.lru_cache(maxsize=1)
def published_rates() -> dict[tuple[str, str], float]:
    """FLOP/s of each published figure by (GPU model as the farm spells it, stage): the write-ups' own GPUs."""
    return {
        (model_from_name(r["device"]), r["stage"]): 2.0 * r["m"] * r["n"] * r["k"] / (r["ms"] / 1e3)
        for r in published_rows()
        if r["ms"]
    }


@dataclass
class CostModel:
    """Expected seconds per cell for the stages of a plan; `measured_rates` by (gpu_model, stage) from earlier rows."""

    stages: dict[str, Measured]
    measured_rates: dict[tuple[str, str], float] = field(default_factory=dict)
    _rates: dict[tuple[str, str], float] = field(default_factory=dict, repr=False)  # looked up once per stage
    paired: bool = False  # a paired sweep: every cell times two arms (module docstring)
    measure: MeasureOptions | None = None  # the plan's [measure]: which cells run in blocks; None: none

    def seconds(self, cell: Cell, gpu_model: str = "") -> float:
        stage = self.stages[cell.stage]
        rate = self._rates.get((gpu_model, cell.stage))
        if rate is None:
            rate = self._rates[(gpu_model, cell.stage)] = (
                self.measured_rates.get((gpu_model, cell.stage))
                or published_rates().get((gpu_model, cell.stage))
                or _prior_rate(stage)
            )
        launch = stage.flops(cell.m, cell.n, cell.k) / rate
        block_s = self._block_s(stage, cell, gpu_model)
        if block_s:
            series = self._series(stage)
            blocks = blocks_per_series(launch, series, block_s, self.measure.timing)
            # its warm-up lasts CAP_PROBE_S at least (in the recorded runs 0.13 s a kernel cell, 0.07 s a baseline's)
            return CELL_OVERHEAD_S + UNTIMED_LAUNCHES * launch + CAP_PROBE_S + blocks * series * block_s
        if self.paired:  # the series timed: two arms (and the baseline) in place of one (and the baseline)
            launch *= 2.0 if stage.is_baseline else 1.5
        return CELL_OVERHEAD_S + UNTIMED_LAUNCHES * launch + min(max(TIMED_LAUNCHES * launch, MIN_TIMED_S), MAX_TIMED_S)

    def _block_s(self, stage: Measured, cell: Cell, gpu_model: str) -> float:
        """The blocks' length the timer will use for `cell` (farm/measure/timing.py); 0: batch by batch. Blocks at the
        cap need the telemetry that finds it."""
        if self.measure is None:
            return 0.0
        timing = self.measure.timing
        capped = self.measure.telemetry and timing.cap_block_s and likely_capped(stage, cell, gpu_model)
        return timing.block_s or (timing.cap_block_s if capped else 0.0)

    def _series(self, stage: Measured) -> int:
        """The series one timing alternates: the stage (a paired cell's two arms) and, for a kernel, its baseline."""
        arms = 2 if self.paired else 1
        return arms if stage.is_baseline else arms + 1

    def longest_first(self, cells: list[Cell], gpu_model: str = "") -> list[tuple[Cell, float]]:
        """The cells with their expected seconds (each priced once), longest first within each repeat. Repeats
        stay apart in time (repeat 0 of every cell, then repeat 1...), as A/A comparisons want; each repeat's
        last cells are its shortest, so the queue's tail is short."""
        priced = [(c, self.seconds(c, gpu_model)) for c in cells]
        return sorted(priced, key=lambda p: (p[0].repeat, -p[1], p[0].key()))


def rates_from_dataset(output: str, models: set[str]) -> dict[tuple[str, str], float]:
    """measured_rates of the rows of GPU models `models` already in the dataset at `output` (any run)."""
    import pyarrow.dataset as pds

    from farm.data.dataset import ROWS, read_columns

    table = read_columns(
        output,
        ROWS,
        ["gpu_model", "stage", "flops", "median_ms", "status"],
        pds.field("gpu_model").isin(sorted(models)),
    )
    return measured_rates(table.to_pylist())


def measured_rates(records: list[dict]) -> dict[tuple[str, str], float]:
    """Median achieved FLOP/s per (gpu_model, stage) over ok rows (gpu_model, stage, flops, median_ms)."""
    rates: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in records:
        if r["status"] == "ok" and r["median_ms"]:
            rates[(r["gpu_model"], r["stage"])].append(r["flops"] / (r["median_ms"] / 1e3))
    return {key: statistics.median(values) for key, values in rates.items()}


@dataclass
class _Shape:
    """A (stage, shape) with cells left in some repeats, and what its last measured repeat took."""

    left: int
    expected: float
    seen: float | None = None


class Eta:
    """Seconds the cells left in a queue will take, honest from the first cells on.

    A cell whose (stage, shape) has not run yet costs its expected seconds times actual over
    expected of the cells of its size (M, N, K) done so far. While none of its size has run, it
    costs its expected seconds times the recent sizes' actual over expected, capped at 1: the
    first cells are the largest (longest first), and what they take (first-use costs, timing
    windows stretched by power-capped clocks) must not inflate the small ones, while cells that
    all run far faster than expected (a stand-in, or a model's rates from earlier runs off) show
    it at once. One whose earlier repeat ran costs what that repeat took (its cell_seconds less
    its verification, which the first repeat pays for the later ones: the FP64 reference is made
    once), times how later repeats compared with earlier ones so far, that ratio starting from 1
    as if AGAIN_PRIOR_S seconds had been seen (the first repeat of a run's first cell carries the
    worker's first-use costs, and one such cell must not set the ratio). Sums are kept as cells
    finish: O(1) per cell. On the recorded cell times of the reference runs this is within 25 % of
    the real remaining time from the tenth cell on, within 45 % on walk D's first runs, and within 5 % on
    h100-llmf8c's cells in blocks at the power cap, priced at their blocks (CostModel.measure; tests/test_cost.py).
    """

    def __init__(self, cells: list[tuple[tuple, float]]) -> None:
        """`cells`: (key, expected seconds) of every cell to run; the key names its (stage, m, n, k)."""
        counts = Counter(key for key, _ in cells)
        self._shapes = {key: _Shape(counts[key], e) for key, e in cells if counts[key] > 1}
        self._unseen_s: dict[tuple, float] = defaultdict(
            float
        )  # per size: expected seconds of cells no repeat of which ran
        for key, e in cells:
            self._unseen_s[key[1:]] += e
        self._done: dict[tuple, list[float]] = {}  # per size with unseen cells and done ones: seconds, expected seconds
        self._fresh_s = sum(self._unseen_s.values())  # _unseen_s summed over the sizes none of whose cells ran
        self._calibrated_s = 0.0  # _unseen_s x the size's actual/expected, summed over the other sizes
        self._unseen_total_s = self._fresh_s  # the sum of _unseen_s
        self._recent_actual_s = self._recent_expected_s = 0.0  # cells priced by size, decaying by RECENT_DECAY a cell
        self._seen_s = 0.0  # sum over measured shapes of cells left x the last repeat's seconds
        self._actual_s = self._expected_s = 0.0  # every cell done: wall seconds, expected seconds
        self._again_s = self._before_s = 0.0  # cells done after an earlier repeat: their seconds, the earlier ones'

    def _unprice(self, size: tuple, sign: float) -> None:
        """Add (sign 1) or take away (sign -1) `size`'s unseen cells from the sum they are priced in."""
        expected = self._unseen_s.get(size, 0.0)
        done = self._done.get(size)
        if done is None:
            self._fresh_s += sign * expected
        else:
            self._calibrated_s += sign * expected * done[0] / done[1]

    def add(self, key: tuple, expected: float, seconds: float, repeat_seconds: float) -> None:
        """A cell of `key` took `seconds` (wall time); another repeat of it is expected to take `repeat_seconds`."""
        size = key[1:]
        self._unprice(size, -1.0)
        self._actual_s += seconds
        self._expected_s += expected
        shape = self._shapes.get(key)
        if size in self._unseen_s and (shape is None or shape.seen is None):  # a cell priced by its size
            done = self._done.setdefault(size, [0.0, 0.0])
            done[0] += seconds
            done[1] += expected
            self._recent_actual_s = RECENT_DECAY * self._recent_actual_s + seconds
            self._recent_expected_s = RECENT_DECAY * self._recent_expected_s + expected
        if shape is None:  # its shape's last (or only) cell
            if size in self._unseen_s:
                self._unseen_s[size] -= expected
                self._unseen_total_s -= expected
        elif shape.seen is None:
            self._unseen_s[size] -= shape.left * shape.expected
            self._unseen_total_s -= shape.left * shape.expected
        else:
            self._again_s += seconds
            self._before_s += shape.seen
            self._seen_s -= shape.left * shape.seen
        if self._unseen_s.get(size, 1.0) <= 1e-9:  # every cell of this size seen: memory shrinks as the run goes
            del self._unseen_s[size]
            self._done.pop(size, None)
        else:
            self._unprice(size, 1.0)
        if shape is None:
            return
        shape.left -= 1
        shape.seen = repeat_seconds
        self._seen_s += shape.left * repeat_seconds
        if not shape.left:
            del self._shapes[key]

    def ratio(self) -> float | None:
        """Actual over expected seconds of the cells done; None before the first."""
        return self._actual_s / self._expected_s if self._expected_s > 0 else None

    def work_left(self) -> float:
        """Seconds of work left priced the way the dispatcher prices each cell (expected x ratio()), so that a
        batch's cells and what is left of the queue compare in one unit."""
        return (self.ratio() or 1.0) * max(self._unseen_total_s, 0.0) + self._again() * max(self._seen_s, 0.0)

    def _again(self) -> float:
        """How repeats compared with their earlier repeat so far, from 1 as if AGAIN_PRIOR_S seconds had been seen."""
        return (self._again_s + AGAIN_PRIOR_S) / (self._before_s + AGAIN_PRIOR_S)

    def seconds_left(self) -> float:
        """Seconds of work left (all GPUs of the queue together); before the first cell, the expected ones."""
        recent = self._recent_actual_s / self._recent_expected_s if self._recent_expected_s > 0 else 1.0
        unseen = max(self._calibrated_s, 0.0) + min(recent, 1.0) * max(self._fresh_s, 0.0)
        return unseen + self._again() * max(self._seen_s, 0.0)
