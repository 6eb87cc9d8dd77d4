"""Adaptive repeats: another repeat of a cell while its repeats disagree more than a comparison can bear.

A comparison's band is mostly the spread between repeats (farm/analysis/noise.py: on short tensor-core kernels the
repeats of one run differ 3-10x more than their batches say). After a cell's planned repeats are in, and after each
extra one, the driver asks `more`: while the standard error of the mean of the cell's log medians, sd / sqrt(n),
exceeds the plan's `repeat_noise` (relative; 0.25 % keeps a two-run comparison's SAME band within 1 % where runs do
not differ otherwise), another repeat is queued, up to the plan's `max_repeats`. Repeats already done in an earlier
part of a resumed run are not seen here, so a resumed cell gets no extra repeat.
"""

from __future__ import annotations

import math
from collections import defaultdict

import pyarrow as pa

from farm.cells import Cell


def mean_noise(log_medians: list[float]) -> float:
    """Standard error of the mean of log medians (relative); inf below two."""
    n = len(log_medians)
    if n < 2:
        return math.inf
    mean = sum(log_medians) / n
    return math.sqrt(sum((y - mean) ** 2 for y in log_medians) / (n - 1) / n)


class AdaptiveRepeats:
    """Per queue and cell: the medians of its repeats so far and how many repeats were issued."""

    def __init__(self, planned: int, most: int, target: float) -> None:
        self.planned, self.most, self.target = planned, most, target
        self._medians: dict[tuple, list[float]] = defaultdict(list)
        self._back: dict[tuple, int] = defaultdict(int)  # rows returned
        self._issued: dict[tuple, int] = {}

    def more(self, queue: str, priced: list[tuple[Cell, float]], rows: pa.RecordBatch) -> list[tuple[Cell, float]]:
        """Rows of `priced` (cells and their expected seconds, in order) came back: the extra repeats to queue."""
        if self.most <= self.planned:
            return []
        out = []
        for (cell, expected), status, ms in zip(
            priced, rows.column("status").to_pylist(), rows.column("median_ms").to_pylist()
        ):
            key = (queue, *cell.key()[:4])
            if status == "ok" and ms and ms > 0:
                self._medians[key].append(math.log(ms))
            self._back[key] += 1
            issued = max(self._issued.get(key, self.planned), cell.repeat + 1)
            if self._back[key] < issued or issued >= self.most or not self._medians[key]:
                continue  # repeats still out, or no more allowed, or nothing timed (skipped, failed)
            if mean_noise(self._medians[key]) > self.target:
                self._issued[key] = issued + 1
                out.append((Cell(cell.stage, cell.m, cell.n, cell.k, issued), expected))
        return out
