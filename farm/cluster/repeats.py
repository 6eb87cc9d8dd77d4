"""Adaptive repeats: another repeat of a cell while its repeats disagree more than a comparison can bear.

A comparison's band is mostly the spread between repeats (farm/analysis/noise.py: on short tensor-core kernels the
repeats of one run differ 3-10x more than their batches say). After a cell's planned repeats are in, and after each
extra one, the driver asks `more`: while the standard error of the mean of the cell's log medians, sd / sqrt(n),
exceeds the plan's `repeat_noise` (relative; 0.25 % keeps a two-run comparison's SAME band within 1 % where runs do
not differ otherwise), another repeat is queued, up to the plan's `max_repeats`. Repeats already done in an earlier
part of a resumed run are not seen here, so a resumed cell gets no extra repeat.

A paired sweep's cell (both arms timed together) is judged by its pairs, so its repeats are its pairs: `pair_outcomes`
gives each cell one outcome, ok only where both arms are, with the pair's ratio B/A as the median whose log the rule
above reads (more pairs where the pairs disagree), and the progress log counts either arm's failure. One pair of an
unthrottled cell is enough: its class's paired noise, learned from A/A history, judges it (an unthrottled H100 pair's
ratio has a robust spread of 0.11 %, a 99 % band of about 1.2 %). A power-capped cell (either arm's row flagged
`throttle_power`) gets at least MIN_CAPPED_PAIRS: its pairs are 2-3x noisier (0.28 % on an H100), so one pair's band
(about 3 %) leaves a 3 % step UNCLEAR, two narrow it by sqrt(2); past that the rule above, up to the plan's maximum.
"""

from __future__ import annotations

import math
from collections import defaultdict

import pyarrow as pa

from farm.cells import Cell

MIN_CAPPED_PAIRS = 2  # pairs a power-capped paired cell gets, where the plan's max_repeats allows


def mean_noise(log_medians: list[float]) -> float:
    """Standard error of the mean of log medians (relative); inf below two."""
    n = len(log_medians)
    if n < 2:
        return math.inf
    mean = sum(log_medians) / n
    return math.sqrt(sum((y - mean) ** 2 for y in log_medians) / (n - 1) / n)


def pair_outcomes(a: pa.RecordBatch, b: list[pa.RecordBatch]) -> tuple[pa.RecordBatch, pa.RecordBatch]:
    """Arm a's outcome rows of paired cells and the arm b rows of the same cells (matched by `pair`): (the cells'
    outcomes, the first arm's failure where one failed, else arm a's; the same with median_ms the ratio B/A and
    throttle_power set where either arm's row has it, for `more`)."""
    other = {
        pair: (status, reason, ms, capped)
        for batch in b
        for pair, status, reason, ms, capped in zip(
            *(batch.column(c).to_pylist() for c in ("pair", "status", "status_reason", "median_ms")), _capped(batch)
        )
    }
    statuses, reasons, ratios, flags = [], [], [], []
    for pair, status, reason, ms, capped in zip(
        *(a.column(c).to_pylist() for c in ("pair", "status", "status_reason", "median_ms")), _capped(a)
    ):
        status_b, reason_b, ms_b, capped_b = other.get(pair, ("error", "arm b's row never came", None, False))
        failed_b = status == "ok" and status_b != "ok"
        statuses.append(status_b if failed_b else status)
        reasons.append(f"arm b: {reason_b}" if failed_b else reason)
        ratios.append(ms_b / ms if status == "ok" and not failed_b and ms and ms_b else None)
        flags.append(bool(capped or capped_b))
    outcomes = a.set_column(a.schema.get_field_index("status"), "status", pa.array(statuses, pa.string()))
    i = a.schema.get_field_index("status_reason")
    outcomes = outcomes.set_column(i, "status_reason", pa.array(reasons, pa.string()))
    i = a.schema.get_field_index("median_ms")
    judged = outcomes.set_column(i, "median_ms", pa.array(ratios, pa.float64()))
    if "throttle_power" in judged.schema.names:
        judged = judged.drop_columns(["throttle_power"])
    return outcomes, judged.append_column("throttle_power", pa.array(flags, pa.bool_()))


def _capped(rows: pa.RecordBatch) -> list[bool]:
    """Per row, whether a telemetry sample of its timing was capped by the power limit (False where not recorded)."""
    if "throttle_power" not in rows.schema.names:
        return [False] * rows.num_rows
    return [bool(x) for x in rows.column("throttle_power").to_pylist()]


class AdaptiveRepeats:
    """Per queue and cell: the medians of its repeats so far (a paired cell's: its pairs' ratios, and whether a pair
    was power-capped) and how many repeats were issued."""

    def __init__(self, planned: int, most: int, target: float, paired: bool = False) -> None:
        self.planned, self.most, self.target, self.paired = planned, most, target, paired
        self._medians: dict[tuple, list[float]] = defaultdict(list)
        self._capped: set[tuple] = set()
        self._back: dict[tuple, int] = defaultdict(int)  # rows returned
        self._issued: dict[tuple, int] = {}

    def more(self, queue: str, priced: list[tuple[Cell, float]], rows: pa.RecordBatch) -> list[tuple[Cell, float]]:
        """Rows of `priced` (cells and their expected seconds, in order) came back: the extra repeats to queue."""
        if self.most <= self.planned:
            return []
        out = []
        for (cell, expected), status, ms, capped in zip(
            priced, rows.column("status").to_pylist(), rows.column("median_ms").to_pylist(), _capped(rows)
        ):
            key = (queue, *cell.key()[:4])
            if status == "ok" and ms and ms > 0:
                self._medians[key].append(math.log(ms))
                if capped:
                    self._capped.add(key)
            self._back[key] += 1
            issued = max(self._issued.get(key, self.planned), cell.repeat + 1)
            if self._back[key] < issued or issued >= self.most or not self._medians[key]:
                continue  # repeats still out, or no more allowed, or nothing timed (skipped, failed)
            if self._wants_more(key):
                self._issued[key] = issued + 1
                out.append((Cell(cell.stage, cell.m, cell.n, cell.k, issued), expected))
        return out

    def _wants_more(self, key: tuple) -> bool:
        """Sequential: while the repeats' mean is noisier than the target. Paired: fewer pairs than the cell needs
        (one; MIN_CAPPED_PAIRS where a pair was power-capped), or two or more whose ratios disagree so."""
        ys = self._medians[key]
        if not self.paired:
            return mean_noise(ys) > self.target
        least = MIN_CAPPED_PAIRS if key in self._capped else 1
        return len(ys) < least or (len(ys) >= 2 and mean_noise(ys) > self.target)
