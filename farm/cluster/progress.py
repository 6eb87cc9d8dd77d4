"""What the job log shows: per-GPU progress at a bounded rate with an ETA, and the final summary.

The ETA is the cost of the cells left (farm.cluster.cost.Eta: expected times calibrated by
the cells measured so far, and earlier repeats of the same cells), shared among the queue's
GPUs: the first cells' raw durations say little about the rest, which differ in size and kernel.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from farm.cells import Cell
from farm.cluster.cost import Eta
from farm.data.schema import STATUSES

log = logging.getLogger("farm.sweep")
# A line per cell as it finishes, for `farm bench` and `farm profile` (farm/sweep.py log_to_stderr turns it on).
cell_log = logging.getLogger("farm.sweep.cells")


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


@dataclass
class _Queue:
    """Cells some GPUs pull from: one GPU's own (replicate) or a model's (shard)."""

    total: int
    already_done: int
    eta: Eta
    gpus: int = 0
    done: int = 0


@dataclass
class GpuTally:
    """What one GPU did in this sweep."""

    name: str
    queue: str
    current: Cell | None = None
    statuses: Counter = field(default_factory=Counter)
    timed_seconds: float = 0.0
    not_run: int = 0
    first_row: float | None = None  # time.monotonic() of its first row
    lost: str = ""  # why it was given up mid-sweep


class Progress:
    """Counts cells per GPU (keyed by UUID) and per queue; logs one line per GPU at most every `every_s` seconds."""

    def __init__(self, every_s: float, started: float) -> None:
        """`started`: time.monotonic() when the sweep began, for its wall time."""
        self._every_s = every_s
        self._queues: dict[str, _Queue] = {}
        self._gpus: dict[str, GpuTally] = {}
        self._start = started
        self._last_log = time.monotonic()

    def add_queue(self, queue: str, cells: list[tuple[tuple, float]], already_done: int) -> None:
        """Register `queue`: the (stage, m, n, k) and expected seconds (farm.cluster.cost) of each cell to run;
        `already_done` cells were resumed."""
        self._queues[queue] = _Queue(len(cells), already_done, Eta(cells))

    def add_cells(self, queue: str, n: int) -> None:
        """`n` more cells joined `queue` (extra repeats, farm.cluster.repeats)."""
        self._queues[queue].total += n

    def add_gpu(self, gpu: str, name: str, queue: str) -> None:
        """Register GPU `gpu` (shown as `name`) pulling from `queue`."""
        self._queues[queue].gpus += 1
        self._gpus[gpu] = GpuTally(name, queue)

    def started(self, gpu: str, cell: Cell) -> None:
        self._gpus[gpu].current = cell

    def idle(self, gpu: str) -> None:
        """`gpu` runs nothing now (between batches, or its cells were queued again after a fault)."""
        self._gpus[gpu].current = None

    def finished(
        self, gpu: str, cells: list[Cell], expected: list[float], rows: pa.RecordBatch, seconds: float
    ) -> None:
        """Outcomes (farm.data.row_batch.OUTCOME) of the next `cells` `gpu` was running, in order; `expected` their
        expected seconds, `seconds` the wall time they took together. A worker sends rows in groups, so the wall
        time is shared among them in proportion to their cell_seconds (evenly when one lacks it)."""
        g = self._gpus[gpu]
        g.current = None
        g.statuses.update(rows.column("status").to_pylist())
        g.timed_seconds += pc.sum(rows.column("timed_seconds")).as_py() or 0.0  # GPU time in timed windows
        g.first_row = g.first_row or time.monotonic()
        q = self._queues[g.queue]
        q.done += len(cells)
        cell_s = rows.column("cell_seconds").to_pylist()
        verify_s = rows.column("verify_seconds").to_pylist()
        total = sum(c or 0.0 for c in cell_s)
        shares = [c / total for c in cell_s] if total > 0 and all(cell_s) else [1 / len(cells)] * len(cells)
        for cell, e, share, own, verify in zip(cells, expected, shares, cell_s, verify_s):
            # Another repeat of the cell: its own time (the worker's, else its wall time) less the first-time verification.
            wall = seconds * share
            q.eta.add(cell.key()[:4], e, wall, max((own or wall) - (verify or 0.0), 0.0))
        if cell_log.isEnabledFor(logging.INFO):
            self._log_cells(g, q, cells, rows)

    @staticmethod
    def _log_cells(g: GpuTally, q: _Queue, cells: list[Cell], rows: pa.RecordBatch) -> None:
        """A line per cell: its status and median, TFLOPS and % of its baseline (a profiled cell: how many values),
        or why it has none."""
        names = ("status", "status_reason", "median_ms", "tflops", "pct_of_baseline", "baseline")
        columns = {n: rows.column(n).to_pylist() if n in rows.schema.names else [None] * len(cells) for n in names}
        for i, cell in enumerate(cells):
            status, reason, ms, tflops, pct, baseline = (columns[n][i] for n in names)
            timed = f"{ms:.4f} ms  {tflops or 0:.2f} TFLOPS  {pct or 0:.1f}% of {baseline}" if ms else ""
            detail = timed if status == "ok" and ms else (reason or "")[:120]
            cell_log.info(
                "%s [%d/%d] %s %dx%dx%d r%d  %s  %s",
                g.name,
                q.done - len(cells) + i + 1,
                q.total,
                cell.stage,
                cell.m,
                cell.n,
                cell.k,
                cell.repeat,
                status,
                detail,
            )

    def lost(self, gpu: str, cells_left: int, why: str = "") -> None:
        """`gpu` is gone (`why`); `cells_left` cells only it could run stay unrun."""
        self._gpus[gpu].not_run += cells_left
        self._gpus[gpu].lost = why or "given up"
        self._queues[self._gpus[gpu].queue].gpus -= 1

    def calibrated(self, queue: str, expected: float) -> float:
        """Expected seconds scaled by the queue's actual / expected so far (unscaled before its first cell)."""
        return expected * (self._queues[queue].eta.ratio() or 1.0)

    def work_left(self, queue: str) -> float:
        """Work left in `queue` in calibrated() seconds, all its GPUs together (farm.cluster.cost.Eta.work_left)."""
        return self._queues[queue].eta.work_left()

    def eta_seconds(self, queue: str) -> float | None:
        """Seconds until the queue is done, or None before its first cell or with no GPU left."""
        q = self._queues[queue]
        return None if q.eta.ratio() is None or q.gpus <= 0 else q.eta.seconds_left() / q.gpus

    def maybe_log(self, force: bool = False) -> None:
        """Log every GPU's line if `every_s` passed since the last time (or `force`)."""
        now = time.monotonic()
        if not force and now - self._last_log < self._every_s:
            return
        self._last_log = now
        for g in self._gpus.values():
            q = self._queues[g.queue]
            shared = f" (queue shared by {q.gpus} GPUs, {sum(g.statuses.values())} here)" if q.gpus > 1 else ""
            now_running = (
                f"{g.current.stage} {g.current.m}x{g.current.n}x{g.current.k} r{g.current.repeat}" if g.current else "-"
            )
            eta = self.eta_seconds(g.queue)
            log.info(
                "%s: %d/%d cells%s, now %s, ETA %s",
                g.name,
                q.done,
                q.total,
                shared,
                now_running,
                "?" if eta is None else _duration(eta),
            )

    def summary(self, what: str = "sweep", statuses: tuple[str, ...] = STATUSES) -> str:
        """Cells per status (of `statuses`: a profile's are others) per GPU, resumed and unrun cells, wall time and
        summed timed GPU time."""
        lines = [f"{what} summary:"]
        for g in self._gpus.values():
            counts = ", ".join(f"{s} {g.statuses[s]}" for s in statuses)
            lines.append(
                f"  {g.name}: {counts}"
                + (f", not run {g.not_run}" if g.not_run else "")
                + (f"; given up: {g.lost}" if g.lost else "")
            )
        resumed = sum(q.already_done for q in self._queues.values())
        wall = time.monotonic() - self._start
        timed = sum(g.timed_seconds for g in self._gpus.values())
        lines.append(f"  already done before this run (resumed): {resumed}")
        lines.append(f"  wall time {wall:.1f} s; timed GPU windows {timed:.1f} s summed over GPUs")
        return "\n".join(lines)

    def tally(self, gpu: str) -> GpuTally:
        return self._gpus[gpu]

    def resumed(self, gpu: str) -> int:
        """Cells of `gpu`'s queue done before this sweep."""
        return self._queues[self._gpus[gpu].queue].already_done

    def statuses(self) -> Counter[str]:
        """Cells by status, every GPU together."""
        return sum((g.statuses for g in self._gpus.values()), Counter())

    def not_run(self) -> int:
        return sum(g.not_run for g in self._gpus.values())
