"""What the job log shows: per-GPU progress at a bounded rate, and the final summary."""
from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field

from farm.cells import Cell
from farm.data.schema import STATUSES

log = logging.getLogger("farm.sweep")


def timed_seconds(row: dict) -> float:
    """GPU time inside the cell's timed windows (its interleaved baseline's included), 0 when untimed."""
    return row.get("timed_seconds") or 0.0


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


@dataclass
class _Queue:
    """Cells some GPUs pull from: one GPU's own (replicate) or a model's (shard)."""

    total: int
    already_done: int
    gpus: int = 0
    done: int = 0
    busy_seconds: float = 0.0  # summed wall time of the cells done


@dataclass
class _Gpu:
    name: str
    queue: str
    current: Cell | None = None
    statuses: Counter = field(default_factory=Counter)
    timed_seconds: float = 0.0
    not_run: int = 0


class Progress:
    """Counts cells per GPU (keyed by UUID) and per queue; logs one line per GPU at most every `every_s` seconds."""

    def __init__(self, every_s: float, started: float) -> None:
        """`started`: time.monotonic() when the sweep began, for its wall time."""
        self._every_s = every_s
        self._queues: dict[str, _Queue] = {}
        self._gpus: dict[str, _Gpu] = {}
        self._start = started
        self._last_log = time.monotonic()

    def add_gpu(self, gpu: str, name: str, queue: str, total: int, already_done: int) -> None:
        """Register GPU `gpu` (shown as `name`) pulling from `queue`: `total` cells to run, `already_done` resumed."""
        q = self._queues.setdefault(queue, _Queue(total, already_done))
        q.gpus += 1
        self._gpus[gpu] = _Gpu(name, queue)

    def started(self, gpu: str, cell: Cell) -> None:
        self._gpus[gpu].current = cell

    def finished(self, gpu: str, row: dict, seconds: float) -> None:
        """A row for the cell `gpu` was running; `seconds` is its wall time."""
        g = self._gpus[gpu]
        g.current = None
        g.statuses[row["status"]] += 1
        g.timed_seconds += timed_seconds(row)
        q = self._queues[g.queue]
        q.done += 1
        q.busy_seconds += seconds

    def interrupted(self, gpu: str) -> None:
        """The cell `gpu` was running ended without a row (worker died; the cell is queued again)."""
        self._gpus[gpu].current = None

    def lost(self, gpu: str, cells_left: int) -> None:
        """`gpu` is gone; `cells_left` cells only it could run stay unrun."""
        self._gpus[gpu].not_run += cells_left
        self._queues[self._gpus[gpu].queue].gpus -= 1

    def _eta(self, q: _Queue) -> str:
        if not q.done or q.gpus <= 0:
            return "?"
        return _duration((q.total - q.done) * q.busy_seconds / q.done / q.gpus)

    def maybe_log(self, force: bool = False) -> None:
        """Log every GPU's line if `every_s` passed since the last time (or `force`)."""
        now = time.monotonic()
        if not force and now - self._last_log < self._every_s:
            return
        self._last_log = now
        for g in self._gpus.values():
            q = self._queues[g.queue]
            shared = f" (queue shared by {q.gpus} GPUs, {sum(g.statuses.values())} here)" if q.gpus > 1 else ""
            now_running = f"{g.current.stage} {g.current.m}x{g.current.n}x{g.current.k} r{g.current.repeat}" if g.current else "-"
            log.info("%s: %d/%d cells%s, now %s, ETA %s", g.name, q.done, q.total, shared, now_running, self._eta(q))

    def summary(self) -> str:
        """Cells per status per GPU, resumed and unrun cells, wall time and summed timed GPU time."""
        lines = ["sweep summary:"]
        for g in self._gpus.values():
            counts = ", ".join(f"{s} {g.statuses[s]}" for s in STATUSES)
            lines.append(f"  {g.name}: {counts}" + (f", not run {g.not_run}" if g.not_run else ""))
        resumed = sum(q.already_done for q in self._queues.values())
        wall = time.monotonic() - self._start
        timed = sum(g.timed_seconds for g in self._gpus.values())
        lines.append(f"  already done before this run (resumed): {resumed}")
        lines.append(f"  wall time {wall:.1f} s; timed GPU windows {timed:.1f} s summed over GPUs")
        return "\n".join(lines)

    def not_run(self) -> int:
        return sum(g.not_run for g in self._gpus.values())
