"""Hand cells to GPU workers one at a time, write rows as they come back, survive worker faults.

Each GPU pulls from a queue: its own (replicate: every GPU runs every cell) or its
model's (shard: the model's GPUs share the cells). Rows finished in one ray.wait round
are written before the next cells are dispatched, so a driver crash loses only cells
in flight. Faults:

- the worker process dies: the cell goes back to the front of its queue and runs on the
  restarted worker (or another GPU of the model); after MAX_CELL_DEATHS deaths it is
  recorded as "error", so a sweep always ends;
- the measurer reports a poisoned CUDA context: its row is kept, the worker restarted;
- the measurer raises: an "error" row with the exception, the worker goes on;
- a cell runs past the plan's cell timeout: a "timeout" row, the worker killed and restarted;
- a worker not ready within the start timeout after a restart: its GPU is given up.
"""
from __future__ import annotations

import logging
import time
from collections import Counter, deque
from dataclasses import dataclass

import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError, RayTaskError

from farm.cells import Cell
from farm.cluster.fleet import Worker
from farm.cluster.progress import Progress
from farm.data.dataset import completed_keys, write_rows
from farm.data.rows import cell_row
from farm.plan import Plan

log = logging.getLogger("farm.sweep")

MAX_CELL_DEATHS = 3
PROGRESS_EVERY_S = 10.0


@dataclass
class _Slot:
    """A worker and the queue it pulls from; `lost` once it cannot be brought back."""

    worker: Worker
    queue_key: str
    queue: deque[Cell]
    lost: bool = False


@dataclass(frozen=True)
class _Task:
    """A call in flight: a cell being measured, or (cell None) a readiness probe after a restart."""

    slot: _Slot
    cell: Cell | None
    started: float
    deadline: float


@dataclass(frozen=True)
class SweepResult:
    """What a sweep did: cells left unrun (their GPU was lost) and the files written."""

    not_run: int
    files: list[str]


def scope_column(mode: str) -> str:
    """The row column a cell is done for: each GPU (replicate) or each model (shard)."""
    return "gpu_uuid" if mode == "replicate" else "gpu_model"


def _warn_cards_new_to_the_run(plan: Plan, workers: list[Worker], done: set[tuple]) -> None:
    """Replicate mode resumes card by card, so a card new to the run measures every cell again. On
    rented machines (another card at every call) that is rarely what was meant: say so, and how to
    continue the model's cells instead."""
    cards = {key[0] for key in done}
    new = [w for w in workers if w.uuid not in cards]
    if not done or not new:  # a fresh run, or every card continues its own cells: nothing more to read
        return
    models = {key[0] for key in completed_keys(plan.output, plan.run_id, "gpu_model")}
    for w in new:
        if w.model in models:
            log.warning("run %s has rows from other %s cards but none from %s (%s): replicate mode measures all its "
                        "cells again on this card; to continue the model's cells instead, resume with --mode shard",
                        plan.run_id, w.model, w.name, w.uuid)


class Dispatcher:
    """Runs a plan's cells on started workers; see the module docstring for the fault rules."""

    def __init__(self, plan: Plan, workers: list[Worker], started: float) -> None:
        """`started`: time.monotonic() when the sweep began (workers' start-up counts in its wall time)."""
        self._plan = plan
        self._stages = {s.name: s for s in plan.stages()}
        self._progress = Progress(PROGRESS_EVERY_S, started)
        self._inflight: dict[ray.ObjectRef, _Task] = {}
        self._deaths: Counter[tuple[str, Cell]] = Counter()
        self._files: list[str] = []
        scope = scope_column(plan.mode)
        done = completed_keys(plan.output, plan.run_id, scope)
        cells = plan.cells()
        queues: dict[str, deque[Cell]] = {}
        self._slots: list[_Slot] = []
        for w in workers:
            key = w.device[scope]
            if key not in queues:
                queues[key] = deque(c for c in cells if (key, *c.key()) not in done)
            self._slots.append(_Slot(w, key, queues[key]))
            self._progress.add_gpu(w.uuid, w.name, key, len(queues[key]), len(cells) - len(queues[key]))
        if scope == "gpu_uuid":
            _warn_cards_new_to_the_run(plan, workers, done)

    def run(self) -> SweepResult:
        """Run every queued cell; always stops the workers, even on error or interrupt."""
        try:
            while True:
                for slot in self._slots:
                    if not slot.lost and slot.queue and not self._busy(slot):
                        self._dispatch(slot)
                if not self._inflight:
                    break
                self._write(self._collect())
                self._progress.maybe_log()
        finally:
            for slot in self._slots:
                ray.kill(slot.worker.actor)
        self._progress.maybe_log(force=True)
        log.info("%s", self._progress.summary())
        return SweepResult(self._progress.not_run(), self._files)

    def _busy(self, slot: _Slot) -> bool:
        return any(t.slot is slot for t in self._inflight.values())

    def _dispatch(self, slot: _Slot) -> None:
        cell = slot.queue.popleft()
        now = time.monotonic()
        ref = slot.worker.actor.measure.remote(cell, self._plan.run_id)
        self._inflight[ref] = _Task(slot, cell, now, now + self._plan.cell_timeout_s)
        self._progress.started(slot.worker.uuid, cell)

    def _probe(self, slot: _Slot) -> None:
        """Wait (without blocking the others) for a restarted worker to answer again."""
        now = time.monotonic()
        self._inflight[slot.worker.actor.device_info.remote()] = _Task(slot, None, now, now + self._plan.start_timeout_s)

    def _restart(self, slot: _Slot) -> None:
        ray.kill(slot.worker.actor, no_restart=False)
        self._probe(slot)

    def _collect(self) -> list[dict]:
        """Rows from one ray.wait round: every call that finished, then every deadline that passed."""
        timeout = max(0.0, min(min(t.deadline for t in self._inflight.values()) - time.monotonic(), PROGRESS_EVERY_S))
        ready, rest = ray.wait(list(self._inflight), num_returns=1, timeout=timeout)
        if ready and rest:
            more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
            ready += more
        rows = [row for ref in ready for row in self._finish(ref, self._inflight.pop(ref))]
        now = time.monotonic()
        for ref, task in [(r, t) for r, t in self._inflight.items() if t.deadline <= now]:
            del self._inflight[ref]
            rows += self._expire(task)
        return rows

    def _finish(self, ref: ray.ObjectRef, task: _Task) -> list[dict]:
        slot, cell = task.slot, task.cell
        if cell is None:
            self._probe_answered(ref, task)
            return []
        seconds = time.monotonic() - task.started
        try:
            row, needs_restart = ray.get(ref)
        except RayActorError as exc:
            self._deaths[(slot.queue_key, cell)] += 1
            deaths = self._deaths[(slot.queue_key, cell)]
            log.warning("%s died running %s (%d/%d): %s", slot.worker.name, cell, deaths, MAX_CELL_DEATHS, _first_line(exc))
            self._probe(slot)
            if deaths < MAX_CELL_DEATHS:
                slot.queue.appendleft(cell)
                self._progress.interrupted(slot.worker.uuid)
                return []
            row = self._driver_row(slot, cell, "error", f"worker died {deaths} times running this cell; last: {_first_line(exc)}")
        except RayTaskError as exc:
            row = self._driver_row(slot, cell, "error", f"measurer raised: {_first_line(exc.cause or exc)}")
        else:
            if needs_restart:
                log.warning("%s: %s poisoned the CUDA context (%s); restarting the worker", slot.worker.name, cell, row.get("status_reason", ""))
                self._restart(slot)
        self._progress.finished(slot.worker.uuid, row, seconds)
        return [row]

    def _probe_answered(self, ref: ray.ObjectRef, task: _Task) -> None:
        try:
            ray.get(ref)
        except ActorUnavailableError:  # still restarting: ask again
            self._inflight[task.slot.worker.actor.device_info.remote()] = task
        except ActorDiedError as exc:
            self._lose(task.slot, f"cannot be restarted: {_first_line(exc)}")

    def _expire(self, task: _Task) -> list[dict]:
        slot, cell = task.slot, task.cell
        if cell is None:
            self._lose(slot, f"not ready {self._plan.start_timeout_s:.0f} s after a restart")
            return []
        log.warning("%s: %s exceeded %.0f s; killing and restarting the worker", slot.worker.name, cell, self._plan.cell_timeout_s)
        self._restart(slot)
        row = self._driver_row(slot, cell, "timeout", f"no result within {self._plan.cell_timeout_s:.0f} s; worker killed and restarted")
        self._progress.finished(slot.worker.uuid, row, time.monotonic() - task.started)
        return [row]

    def _lose(self, slot: _Slot, why: str) -> None:
        slot.lost = True
        ray.kill(slot.worker.actor)
        others = any(s.queue is slot.queue and not s.lost for s in self._slots)
        left = 0 if others else len(slot.queue)
        log.error("%s is given up (%s); %d of its cells stay unrun", slot.worker.name, why, left)
        self._progress.lost(slot.worker.uuid, left)

    def _driver_row(self, slot: _Slot, cell: Cell, status: str, reason: str) -> dict:
        """A row for a cell the worker could not report on itself."""
        return cell_row(slot.worker.device, self._stages[cell.stage], cell, self._plan.run_id, status, reason)

    def _write(self, rows: list[dict]) -> None:
        self._files += write_rows(rows, self._plan.output)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
