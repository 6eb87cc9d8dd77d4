"""Buffered writes: rows wait in the driver, as the Arrow batches workers sent, and go to the dataset as one
file per partition per flush; a write that fails sends them to a fallback location instead of losing them.

A flush happens every `flush_s` seconds, as soon as `max_rows` rows (or `max_samples` raw
telemetry samples) wait, and always at the end of a sweep or on its interrupt. So the
driver's memory is bounded, a dataset gets few large files instead of one per cell, and
a driver killed outright (SIGKILL, power) loses at most the rows of the last `flush_s`
seconds, which a resume measures again.

The output is checked before a sweep starts (probe_output: created, a file written and
removed). If a write fails later (disk full, permissions, the path replaced), that write's
files and every later one go to a fallback dataset on this machine (fallback_location), the
log names it, and the writer's `fallback` says so; the next sweep with the same output moves
the fallback's files into it (adopt_fallback) before it runs, so that a resume with the same
run id sees every row.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs

from farm.data.dataset import Parts, resolve, row_batch_parts, table_parts, write_parts
from farm.data.row_batch import RowBatch

FLUSH_EVERY_S = 10.0
MAX_ROWS = (
    200_000  # about 1 KB a row as Arrow: at most some 200 MB waiting, and a flush interval's rows at 20,000 rows/s
)
MAX_SAMPLES = 2_000_000
FALLBACK_ENV = "GEMM_FARM_FALLBACK"  # where fallback datasets go (default: ~/gemm-farm-fallback, else the temp dir)
WRITE_ERRORS = (OSError, pa.ArrowException)  # pyarrow raises OSError (ArrowIOError) for what the filesystem refuses

log = logging.getLogger("farm.sweep")


class OutputError(ValueError):
    """The output location cannot take a dataset: the message says why."""


def probe_output(output: str) -> None:
    """Create `output` and write and remove a probe file there; OutputError if any of it fails."""
    fs, root = resolve(output)
    try:
        if fs.get_file_info(root).type == pafs.FileType.File:
            raise OutputError(f"output {output} is an existing file; give a directory (a dataset is a directory tree)")
        fs.create_dir(root, recursive=True)
        probe = f"{root}/.probe-{uuid.uuid4().hex}"
        with fs.open_output_stream(probe) as sink:
            sink.write(b"gemm-farm write probe")
        fs.delete_file(probe)
    except WRITE_ERRORS as exc:
        raise OutputError(f"cannot write to output {output}: {exc}") from None


def fallback_location(output: str) -> list[str]:
    """Where the rows meant for `output` go if it fails, best first: $GEMM_FARM_FALLBACK or ~/gemm-farm-fallback,
    then the temp dir; a folder named after `output` in each, so that a resume finds it."""
    where = output if "://" in output else resolve(output)[1]  # a local output by its absolute path
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", where).strip("_") or "output"
    bases = [
        os.environ.get(FALLBACK_ENV) or str(Path.home() / "gemm-farm-fallback"),
        str(Path(tempfile.gettempdir()) / "gemm-farm-fallback"),
    ]
    return [str(Path(base) / name) for base in dict.fromkeys(bases)]


def adopt_fallback(output: str) -> list[str]:
    """Move the files an earlier sweep left in `output`'s fallback into `output` (already probed); returns them."""
    moved = []
    fs, root = resolve(output)
    for fallback in fallback_location(output):
        base = Path(fallback)
        for path in sorted(base.rglob("*.parquet")) if base.is_dir() else []:
            directory = f"{root}/{path.parent.relative_to(base).as_posix()}"
            fs.create_dir(directory, recursive=True)
            tmp = f"{directory}/.{path.name}.tmp"
            with fs.open_output_stream(tmp) as sink:  # hidden until whole, as every dataset file (dataset.py)
                sink.write(path.read_bytes())
            fs.move(tmp, f"{directory}/{path.name}")
            path.unlink()
            moved.append(f"{directory}/{path.name}")
    return moved


class BufferedWriter:
    """Holds RowBatches for the dataset at `output`; `files` lists what it wrote, `fallback` where it wrote once
    `output` failed (None while it has not)."""

    def __init__(
        self, output: str, flush_s: float = FLUSH_EVERY_S, max_rows: int = MAX_ROWS, max_samples: int = MAX_SAMPLES
    ) -> None:
        self._output = output
        self.flush_s = flush_s
        self._max_rows, self._max_samples = max_rows, max_samples
        self._batches: list[RowBatch] = []
        self._rows = self._samples = 0
        self._last = time.monotonic()
        self.files: list[str] = []
        self.flushes = 0
        self.fallback: str | None = None

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
            self._write(row_batch_parts(batches))
            self.flushes += 1

    def write_records(self, records: list[dict], table: str) -> None:
        """Records of another table (the runs table) to the same place as the rows, now."""
        self._write(table_parts(records, table))

    def _write(self, parts: Parts) -> None:
        """The parts to the output, or what a failed write left of them to the fallback (and from then on)."""
        targets = [self.fallback] if self.fallback else [self._output, *fallback_location(self._output)]
        for target in targets:
            try:
                self.files += write_parts(parts, target)
                return
            except WRITE_ERRORS as exc:
                if target == targets[-1]:
                    raise  # nowhere left on this machine: the driver's own error, with its rows unwritten
                log.error(
                    "could not write rows to %s (%s: %s); they go to %s from now on, and a sweep with the "
                    "same --output moves them back once it is writable",
                    target,
                    type(exc).__name__,
                    exc,
                    targets[targets.index(target) + 1],
                )
                self.fallback = targets[targets.index(target) + 1]
