"""Buffered writes: rows wait in the driver, as the Arrow batches workers sent, and go to the dataset as one
file per partition per flush.

A flush happens every `flush_s` seconds, as soon as `max_rows` rows (or `max_samples` raw
telemetry samples) wait, and always at the end of a sweep or on its interrupt. So the
driver's memory is bounded, a dataset gets few large files instead of one per cell, and
a driver killed outright (SIGKILL, power) loses at most the rows of the last `flush_s`
seconds, which a resume measures again.
"""
from __future__ import annotations

import time

from farm.data.dataset import write_row_batches
from farm.data.row_batch import RowBatch

FLUSH_EVERY_S = 10.0
MAX_ROWS = 200_000  # about 1 KB a row as Arrow: at most some 200 MB waiting, and a flush interval's rows at 20,000 rows/s
MAX_SAMPLES = 2_000_000


class BufferedWriter:
    """Holds RowBatches for the dataset at `output`; `files` lists what it wrote."""

    def __init__(self, output: str, flush_s: float = FLUSH_EVERY_S, max_rows: int = MAX_ROWS,
                 max_samples: int = MAX_SAMPLES) -> None:
        self._output = output
        self.flush_s = flush_s
        self._max_rows, self._max_samples = max_rows, max_samples
        self._batches: list[RowBatch] = []
        self._rows = self._samples = 0
        self._last = time.monotonic()
        self.files: list[str] = []
        self.flushes = 0

    def add(self, batch: RowBatch) -> None:
        self._batches.append(batch)
        self._rows += batch.rows.num_rows
        self._samples += 0 if batch.telemetry is None else batch.telemetry.num_rows
        if self._rows >= self._max_rows or self._samples >= self._max_samples:
            self.flush()

    def seconds_to_flush(self) -> float:
        """Seconds until the next timed flush is due (0: now)."""
        return max(0.0, self._last + self.flush_s - time.monotonic())

    def maybe_flush(self) -> None:
        if not self.seconds_to_flush():
            self.flush()

    def flush(self) -> None:
        """Write every waiting row: one file per partition of each table."""
        self._last = time.monotonic()
        if self._batches:
            batches, self._batches, self._rows, self._samples = self._batches, [], 0, 0
            self.files += write_row_batches(batches, self._output)
            self.flushes += 1
