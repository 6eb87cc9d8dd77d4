"""Hand batches of cells to GPU workers, take their results as a stream, survive worker faults.

The one path every cell takes, on a cluster (farm/sweep.py) or on this machine's GPUs (`farm bench`, `farm
profile`: the same driver on a local Ray), measured or profiled: a profiled cell (one per stage and shape,
under Nsight Compute: farm.measure.profiler) is handed out, resumed, written and survives faults as a measured
one does, its records going to the profile table instead of the rows table.

Each GPU pulls from a queue: its own (replicate: every GPU runs every cell) or its
model's (shard: the model's GPUs share the cells), ordered longest expected cell first
within each repeat (farm.cluster.cost). A GPU gets a batch of cells at a time, sized to a few
seconds of expected work and smaller near the end of its queue so that its GPUs finish
together; one more batch waits on the worker, so the GPU never waits on the driver.

Batches are Ray streaming generators (GpuWorker.measure_batch): one actor call per batch,
its rows reaching the driver through Ray's own transport and fault reporting, gathered for
at most gather_s (a streamed item per row costs a worker about ten times the CPU of the row
itself) and sent as Arrow record batches the worker made (farm.data.row_batch), so that the
driver never handles a row as Python objects: it counts a few columns (farm.cluster.progress)
and hands the batches to a BufferedWriter (farm.data.writer). Faults, per cell:

- the worker process dies: its unfinished cells go back to the front of the queue. When it
  died running a batch's only unfinished cell, or a cell that runs alone, that cell counts a
  death; otherwise the cell that killed it is one of the batch's unfinished cells (the last
  results, gathered but not sent, die with the worker), and each of those runs alone until
  it has a row, so that the next death names its cell. A cell that killed a worker runs
  alone after that, and after MAX_CELL_DEATHS deaths it is recorded as "error", so a
  sweep always ends;
- the measurer reports a poisoned CUDA context: its row is kept, the worker restarted,
  the rest of its batches queued again;
- the measurer raises: an "error" row with the exception, the worker goes on;
- a cell runs past the plan's cell timeout: a "timeout" row, the worker killed and
  restarted, the rest of its batches queued again;
- a worker not ready within the start timeout after a restart: its GPU is given up;
- a worker whose node is gone (marked dead, or the restart cannot be placed there: its raylet is
  unreachable): its GPU is given up at once, its unfinished cells queued again for the other GPUs
  of its queue (shard) or counted "not run" when no GPU of the queue is left (replicate).

A profiled cell's timeout is the profiler's (ProfileOptions.timeout_s) plus PROFILE_GRACE_S: the worker's profiler
kills ncu's process group at its own timeout and records a "timeout" row itself, which killing the worker first
would not do (ncu runs in a session of its own, and would outlive the worker on the GPU).

In shard mode, GPUs that join the cluster mid-sweep (farm.cluster.fleet.Recruiter) take cells
from the queue of their model, while it still has a GPU of its own; other GPUs are left alone.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, deque
from dataclasses import dataclass, field

import ray
from ray.exceptions import ActorUnavailableError, RayError, RayTaskError

from farm.cells import ARMS, Cell, pair_id
from farm.cluster.cost import CostModel
from farm.cluster.fleet import Recruiter, Worker
from farm.cluster.progress import Progress
from farm.cluster.repeats import AdaptiveRepeats, pair_outcomes
from farm.data.dataset import PROFILE, ROWS, completed_keys
from farm.data.row_batch import RowBatch, profile_batch, row_batches, with_constant
from farm.data.rows import cell_row
from farm.data.schema import PROFILE_STATUSES
from farm.data.writer import BufferedWriter
from farm.measure.profiler import ProfileOptions, status_records
from farm.plan import Plan

log = logging.getLogger("farm.sweep")

MAX_CELL_DEATHS = 3
PROGRESS_EVERY_S = 10.0
BATCHES_IN_FLIGHT = 2  # the one running and the next, waiting on the worker
BATCH_TARGET_S = 5.0  # expected work per batch, calibrated by the cells measured so far
TAIL_SPLIT = 4  # near the end a batch holds at most 1/(TAIL_SPLIT x GPUs) of its queue's expected work
# ... but never less than this (or one cell): a batch costs the driver and the worker a few ms whatever it holds, and
# a tail this short is lost at most.
MIN_BATCH_S = 0.25
MAX_BATCH_CELLS = 1000
# Workers hold results up to gather_s to send them together (GpuWorker.measure_batch): GATHER_MIN_S, doubled
# while the driver is busy more than BUSY_HIGH of the time, halved again while it is busy less than BUSY_LOW.
GATHER_MIN_S, GATHER_MAX_S = 0.2, 1.0
BUSY_HIGH, BUSY_LOW = 0.5, 0.2
LOAD_WINDOW_S = 0.5
SUSPECTS_NAMED = 8  # cells a death's log line names
PROBE_RETRY_S = 0.5  # a restarting worker that cannot be reached yet is asked again this much later
JOIN_EVERY_S = 5.0  # how often the cluster is looked at for GPUs that joined (shard mode)
PROFILE_GRACE_S = 120.0  # a profiled cell's deadline past its profiler's own (module docstring)


@dataclass
class _Queue:
    """Cells some GPUs pull from, and how many live GPUs pull from it."""

    key: str
    cells: deque[tuple[Cell, float]]  # and each one's expected seconds (farm.cluster.cost), priced once
    gpus: int = 0


@dataclass(eq=False)
class _Batch:
    cells: list[Cell]
    expected: list[float]  # each cell's expected seconds
    stream: ray.ObjectRefGenerator
    done: int = 0  # results received
    since: float | None = None  # when its current cell started; None while queued behind an earlier batch

    def left(self) -> list[Cell]:
        return self.cells[self.done :]

    def left_priced(self) -> list[tuple[Cell, float]]:
        return list(zip(self.cells[self.done :], self.expected[self.done :]))


@dataclass
class _Slot:
    """A worker, the queue it pulls from and its batches in flight; `probe` while it restarts (or `retry_at`, when
    to ask again); `lost` once given up."""

    worker: Worker
    queue: _Queue
    batches: list[_Batch] = field(default_factory=list)
    probe: ray.ObjectRef | None = None
    probe_deadline: float = 0.0
    retry_at: float | None = None
    lost: bool = False
    blamed: list[tuple[str, Cell]] = field(
        default_factory=list
    )  # cells its last death counted against, until it answers

    def restarting(self) -> bool:
        return self.probe is not None or self.retry_at is not None


@dataclass(frozen=True)
class SweepResult:
    """What a sweep (or a profile pass) did: cells left unrun (their GPU was lost), the files written and in how many
    flushes, the fallback location rows went to when the output failed (farm.data.writer), the workers that ran
    cells, the cells' statuses."""

    not_run: int
    files: list[str]
    flushes: int
    fallback: str | None
    workers: list[Worker]
    statuses: Counter[str]  # cells by status, every GPU together


def scope_column(mode: str) -> str:
    """The row column a cell is done for: each GPU (replicate) or each model (shard)."""
    return "gpu_uuid" if mode == "replicate" else "gpu_model"


def _warn_cards_new_to_the_run(plan: Plan, workers: list[Worker], done: set[tuple], table: str) -> None:
    """Replicate mode resumes card by card, so a card new to the run measures every cell again. On
    rented machines (another card at every call) that is rarely what was meant: say so, and how to
    continue the model's cells instead."""
    cards = {key[0] for key in done}
    new = [w for w in workers if w.uuid not in cards]
    if not done or not new:  # a fresh run, or every card continues its own cells: nothing more to read
        return
    models = {key[0] for key in completed_keys(plan.output, plan.run_id, "gpu_model", table)}
    for w in new:
        if w.model in models:
            log.warning(
                "run %s has rows from other %s cards but none from %s (%s): replicate mode measures all its "
                "cells again on this card; to continue the model's cells instead, resume with --mode shard",
                plan.run_id,
                w.model,
                w.name,
                w.uuid,
            )


class Dispatcher:
    """Runs a plan's cells on started workers; see the module docstring for the batches and fault rules."""

    def __init__(
        self,
        plan: Plan,
        workers: list[Worker],
        progress: Progress,
        cost: CostModel,
        writer: BufferedWriter,
        recruiter: Recruiter | None = None,
        profile: ProfileOptions | None = None,
    ) -> None:
        """`recruiter`: finds GPUs that join mid-sweep (shard mode only: replicate's set of GPUs is the plan's).
        `profile`: profile each (stage, shape) of the plan once instead of measuring its cells."""
        self._plan = plan
        self._profile = profile
        self._table = PROFILE if profile else ROWS
        self._cell_timeout_s = profile.timeout_s + PROFILE_GRACE_S if profile else plan.cell_timeout_s
        self._recruiter = recruiter
        self._next_look = time.monotonic() + JOIN_EVERY_S
        self._cost = cost
        self._progress = progress
        self._writer = writer
        self._deaths: Counter[tuple[str, Cell]] = Counter()
        self._suspects: set[tuple[str, Cell]] = set()  # cells of a batch a worker died in, its culprit not known
        self._gather_s = GATHER_MIN_S
        self._repeats = AdaptiveRepeats(
            plan.repeats, 0 if profile else plan.max_repeats, plan.repeat_noise, paired=plan.paired and not profile
        )
        self._window_start, self._blocked_s = time.monotonic(), 0.0
        self._scope = scope_column(plan.mode)
        # A paired sweep's cell is done once both arms' runs have its row.
        done = set.intersection(*(completed_keys(plan.output, run, self._scope, self._table) for run in self._runs()))
        cells = plan.cells(repeats=1 if profile else None)  # a profile has no repeats
        self._plan_cells = len(cells)  # each queue's share of the plan: every cell, once per GPU or per model
        self._queues: dict[str, _Queue] = {}
        self._slots: list[_Slot] = []
        self.expected_s: Counter[str] = Counter()  # expected GPU seconds of the cells to run, per GPU model
        for w in workers:
            key = w.device[self._scope]
            if key not in self._queues:
                todo = cost.longest_first([c for c in cells if (key, *c.key()) not in done], w.model)
                self._queues[key] = _Queue(key, deque(todo))
                progress.add_queue(key, [(c.key()[:4], seconds) for c, seconds in todo], len(cells) - len(todo))
                self.expected_s[w.model] += sum(seconds for _, seconds in todo)
            self._add_slot(w, self._queues[key])
        if self._scope == "gpu_uuid":
            _warn_cards_new_to_the_run(plan, workers, done, self._table)

    def _runs(self) -> tuple[str, ...]:
        return (self._plan.run_id,) if self._profile else self._plan.arm_runs()

    def _add_slot(self, w: Worker, q: _Queue) -> None:
        q.gpus += 1
        self._slots.append(_Slot(w, q))
        self._progress.add_gpu(w.key, w.name, q.key)

    @property
    def workers(self) -> list[Worker]:
        """Every worker that took part, those that joined mid-sweep included."""
        return [s.worker for s in self._slots]

    @property
    def live_workers(self) -> list[Worker]:
        """The workers not given up: what a later pass over the same GPUs may use."""
        return [s.worker for s in self._slots if not s.lost]

    def run(self) -> SweepResult:
        """Run every queued cell; always stops the workers still starting and writes what it holds, even on error or
        interrupt. The workers themselves are the caller's to stop (a profile pass may follow on them)."""
        try:
            while True:
                for slot in self._slots:
                    self._top_up(slot)
                # A slot's later batch is read once it is the first: the worker runs its batches in order.
                streams = {s.batches[0].stream: s for s in self._slots if s.batches}
                probes = {s.probe: s for s in self._slots if s.probe is not None}
                if not streams and not probes and not any(s.retry_at for s in self._slots):
                    break
                self._look_for_gpus()
                refs = [*streams, *probes, *(self._recruiter.pending if self._recruiter else ())]
                blocked_from = time.monotonic()
                if refs:
                    ready, _ = ray.wait(refs, num_returns=1, timeout=self._wait_s())
                else:  # only workers waiting to ask a restarting worker again
                    ready = []
                    time.sleep(self._wait_s())
                self._blocked_s += time.monotonic() - blocked_from
                if ready:  # and whatever else is ready by now
                    ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
                for ref in ready:
                    if ref in probes:
                        self._probe_answered(probes[ref])
                    elif ref in streams:
                        self._take(streams[ref])
                    else:
                        self._joined(ref)
                self._expire()
                self._writer.maybe_flush()
                self._progress.maybe_log()
                self._adapt_gather()
        finally:
            if self._recruiter:
                self._recruiter.stop()
            self._writer.flush()
        self._progress.maybe_log(force=True)
        log.info("%s", self._progress.summary(*(("profile pass", PROFILE_STATUSES) if self._profile else ())))
        if self._writer.fallback:
            log.error(
                "the output %s failed mid-sweep: rows written since are in %s; a sweep with the same --output "
                "and --run-id moves them back and finishes the run",
                self._plan.output,
                self._writer.fallback,
            )
        return SweepResult(
            self._progress.not_run(),
            self._writer.files,
            self._writer.flushes,
            self._writer.fallback,
            self.workers,
            self._progress.statuses(),
        )

    def _look_for_gpus(self) -> None:
        """Every JOIN_EVERY_S, start a worker on each GPU that joined the cluster (shard mode)."""
        if self._recruiter and time.monotonic() >= self._next_look:
            self._next_look = time.monotonic() + JOIN_EVERY_S
            self._recruiter.look()

    def _joined(self, ref: ray.ObjectRef) -> None:
        """A worker started on a GPU that joined: it pulls from its model's queue while that has a GPU of its own
        (a queue none is left for has its cells counted not run already)."""
        w = self._recruiter.answered(ref)
        if w is None:
            return
        q = self._queues.get(w.device[self._scope])
        if q is None or q.gpus <= 0:
            log.info("%s joined the cluster; no GPU of its model runs this sweep, so it is left alone", w.name)
            ray.kill(w.actor)
            return
        log.info("%s joined the cluster and takes cells of its model's queue (%d left)", w.name, len(q.cells))
        self._add_slot(w, q)

    def _adapt_gather(self) -> None:
        now = time.monotonic()
        if now - self._window_start < LOAD_WINDOW_S:
            return
        busy = 1 - self._blocked_s / (now - self._window_start)
        if busy > BUSY_HIGH:
            self._gather_s = min(2 * self._gather_s, GATHER_MAX_S)
        elif busy < BUSY_LOW:
            self._gather_s = max(self._gather_s / 2, GATHER_MIN_S)
        self._window_start, self._blocked_s = now, 0.0

    def _wait_s(self) -> float:
        now = time.monotonic()
        deadlines = [b.since + self._cell_timeout_s for s in self._slots for b in s.batches[:1] if b.since is not None]
        deadlines += [s.probe_deadline for s in self._slots if s.restarting()]
        deadlines += [s.retry_at for s in self._slots if s.retry_at is not None]
        deadlines += [self._next_look] if self._recruiter else []
        return max(0.0, min([*(d - now for d in deadlines), self._writer.seconds_to_flush(), PROGRESS_EVERY_S]))

    def _top_up(self, slot: _Slot) -> None:
        while not slot.lost and not slot.restarting() and slot.queue.cells and len(slot.batches) < BATCHES_IN_FLIGHT:
            cells, expected = self._next_batch(slot.queue)
            # As lists of their fields, which Ray packs natively (msgpack): a Cell, or a tuple, is pickled apart.
            stream = slot.worker.actor.measure_batch.remote(
                [[*c.key()] for c in cells], self._plan.run_id, self._gather_s, self._profile
            )
            slot.batches.append(_Batch(cells, expected, stream, since=None if slot.batches else time.monotonic()))
            if len(slot.batches) == 1:
                self._progress.started(slot.worker.key, cells[0])

    def _next_batch(self, q: _Queue) -> tuple[list[Cell], list[float]]:
        """Cells from the front of `q` worth about BATCH_TARGET_S, less near the end, and their expected seconds; a
        cell that killed a worker, or may have, alone."""
        # The budget in expected seconds: the queue's actual/expected so far turns calibrated seconds into them.
        budget = min(BATCH_TARGET_S, max(self._progress.work_left(q.key) / (TAIL_SPLIT * max(q.gpus, 1)), MIN_BATCH_S))
        budget /= self._progress.calibrated(q.key, 1.0)
        cell, spent = q.cells.popleft()
        cells, expected = [cell], [spent]
        if self._alone(q, cell):
            return cells, expected
        room = MAX_BATCH_CELLS - 1
        any_alone = bool(self._deaths or self._suspects)  # else no cell to look up
        while q.cells and room:
            cell, seconds = q.cells[0]
            spent += seconds
            if spent > budget or (any_alone and self._alone(q, cell)):
                break
            q.cells.popleft()
            cells.append(cell)
            expected.append(seconds)
            room -= 1
        return cells, expected

    def _alone(self, q: _Queue, cell: Cell) -> bool:
        return bool(self._deaths[(q.key, cell)]) or (q.key, cell) in self._suspects

    def _take(self, slot: _Slot) -> None:
        """The next item of the slot's first batch: rows, the batch's end, or the worker's failure."""
        batch = slot.batches[0]
        try:
            got, needs_restart = ray.get(next(batch.stream))
        except StopIteration:
            self._batch_ended(slot, batch)
            return
        except RayTaskError as exc:  # the worker's own code failed outside a measurement: the cell is an error
            self._worker_failed(slot, exc)
            return
        except RayError as exc:  # the worker died, cannot be placed again (its node is gone), or its rows were lost
            self._worker_died(slot, exc)
            return
        # a paired sweep's arm b rows: written, and read with arm a's, whose rows count the cells (one each)
        arm_b = [r for r in got if r.table == ROWS and r.rows.column("arm")[0].as_py() == "b"]
        for rows in arm_b:
            self._writer.add(with_constant(rows, "plan_cells", self._plan_cells))
        for rows in got:
            if not any(rows is b for b in arm_b):
                self._finished(slot, batch, rows, [b.rows for b in arm_b] if self._plan.paired else None)
        if needs_restart:
            last = got[-1].rows
            log.warning(
                "%s: %s poisoned the CUDA context (%s); restarting the worker",
                slot.worker.name,
                batch.cells[batch.done - 1],
                last.column("status_reason")[-1].as_py() or "",
            )
            self._restart(slot)

    def _finished(self, slot: _Slot, batch: _Batch, rows: RowBatch, arm_b: list | None = None) -> None:
        """Rows for the next cells of `batch`, in order; `arm_b`: a paired sweep's arm b rows that came with them."""
        now = time.monotonic()
        outcomes = rows.outcomes()
        judged = outcomes  # what adaptive repeats read: a paired cell's pair ratio (repeats.pair_outcomes)
        if arm_b is not None and rows.table == ROWS:
            outcomes, judged = pair_outcomes(outcomes, arm_b)
        n = outcomes.num_rows
        cells = batch.cells[batch.done : batch.done + n]
        if self._suspects:
            self._suspects.difference_update((slot.queue.key, c) for c in cells)
        self._progress.finished(
            slot.worker.key, cells, batch.expected[batch.done : batch.done + n], outcomes, now - batch.since
        )
        self._writer.add(with_constant(rows, "plan_cells", self._plan_cells) if rows.table == ROWS else rows)
        again = self._repeats.more(slot.queue.key, batch.left_priced()[:n], judged)  # cells whose repeats disagree
        slot.queue.cells.extend(again)
        self._progress.add_cells(slot.queue.key, len(again))
        batch.done += n
        batch.since = now
        if batch.done < len(batch.cells):
            self._progress.started(slot.worker.key, batch.cells[batch.done])
        else:  # every row in: the worker is on its next batch already, and its stream's end needs no reading
            self._batch_ended(slot, batch)

    def _batch_ended(self, slot: _Slot, batch: _Batch) -> None:
        slot.batches.remove(batch)
        self._requeue(slot.queue, batch.left_priced())  # none, unless the worker stopped early (a poisoned context)
        if slot.batches:
            slot.batches[0].since = time.monotonic()
            self._progress.started(slot.worker.key, slot.batches[0].cells[0])
        else:
            self._progress.idle(slot.worker.key)

    def _running(self, slot: _Slot) -> Cell | None:
        first = slot.batches[0] if slot.batches else None
        return first.cells[first.done] if first and first.since is not None and first.left() else None

    def _drop_batches(self, slot: _Slot) -> None:
        """Queue the unfinished cells of `slot`'s batches again, in their order, at the front."""
        left = [p for b in slot.batches for p in b.left_priced()]
        slot.batches.clear()
        self._requeue(slot.queue, left)
        self._progress.idle(slot.worker.key)

    def _requeue(self, q: _Queue, priced: list[tuple[Cell, float]]) -> None:
        q.cells.extendleft(reversed(priced))

    def _worker_died(self, slot: _Slot, exc: RayError) -> None:
        gone = _node_gone(slot.worker)
        if gone:  # no cell's fault: its cells go back to the queue, uncounted, and its GPU is given up
            self._drop_batches(slot)
            self._lose(slot, gone, f"the worker's last error: {_first_line(exc)}")
            return
        cell = self._running(slot)
        if cell is None:  # died between batches: nothing of its own lost
            self._drop_batches(slot)
            self._probe(slot)
            return
        suspects = slot.batches[0].left()
        if len(suspects) > 1:  # any of them: the results the worker was gathering died with it
            slot.blamed = [(slot.queue.key, c) for c in suspects if (slot.queue.key, c) not in self._suspects]
            self._suspects.update(slot.blamed)
            named = ", ".join(map(str, suspects[:SUSPECTS_NAMED])) + (" ..." if len(suspects) > SUSPECTS_NAMED else "")
            log.warning(
                "%s died running one of %d cells (its gathered results unsent), each to run alone until "
                "it has a row: %s: %s",
                slot.worker.name,
                len(suspects),
                named,
                _first_line(exc),
            )
            self._drop_batches(slot)
            self._probe(slot)
            return
        self._deaths[(slot.queue.key, cell)] += 1
        slot.blamed = [(slot.queue.key, cell)]
        deaths = self._deaths[(slot.queue.key, cell)]
        log.warning("%s died running %s (%d/%d): %s", slot.worker.name, cell, deaths, MAX_CELL_DEATHS, _first_line(exc))
        if deaths < MAX_CELL_DEATHS:
            self._drop_batches(slot)
        else:
            self._fail_running(slot, "error", f"worker died {deaths} times running this cell; last: {_first_line(exc)}")
        self._probe(slot)

    def _worker_failed(self, slot: _Slot, exc: RayTaskError) -> None:
        if self._running(slot) is not None:
            self._fail_running(slot, "error", f"worker raised: {_first_line(exc.cause or exc)}")
        self._restart(slot)

    def _fail_running(self, slot: _Slot, status: str, reason: str) -> None:
        """A driver-made row for the cell `slot` is running (a row per arm of a paired sweep); the rest of its batches
        queued again."""
        batch = slot.batches[0]
        cell = batch.cells[batch.done]
        first, *others = self._driver_rows(slot, cell, status, reason)
        for rows in others:
            self._writer.add(with_constant(rows, "plan_cells", self._plan_cells))
        self._finished(slot, batch, first)
        self._drop_batches(slot)

    def _restart(self, slot: _Slot) -> None:
        self._drop_batches(slot)
        ray.kill(slot.worker.actor, no_restart=False)
        self._probe(slot)

    def _probe(self, slot: _Slot) -> None:
        """Wait (without blocking the others) for a restarted worker to answer again."""
        slot.probe = slot.worker.actor.device_info.remote()
        slot.probe_deadline = time.monotonic() + self._plan.start_timeout_s

    def _probe_answered(self, slot: _Slot) -> None:
        try:
            ray.get(slot.probe)
            slot.probe, slot.blamed = None, []
        except ActorUnavailableError as exc:  # not reachable yet: ask again soon, unless its node is gone
            slot.probe = None
            gone = _node_gone(slot.worker)
            if gone:
                self._lose(slot, gone, _first_line(exc))
            else:
                slot.retry_at = time.monotonic() + PROBE_RETRY_S
        except RayError as exc:  # died for good, or cannot be placed again (ActorUnschedulableError: its node is gone)
            self._lose(slot, _node_gone(slot.worker) or "cannot be restarted", _first_line(exc))

    def _expire(self) -> None:
        now = time.monotonic()
        for slot in self._slots:
            if slot.retry_at is not None and now >= slot.retry_at:
                slot.retry_at, slot.probe = None, slot.worker.actor.device_info.remote()
            if slot.restarting() and now >= slot.probe_deadline:
                self._lose(slot, f"not ready {self._plan.start_timeout_s:.0f} s after a restart")
            elif (
                slot.batches
                and slot.batches[0].since is not None
                and now - slot.batches[0].since >= self._cell_timeout_s
            ):
                log.warning(
                    "%s: %s exceeded %.0f s; killing and restarting the worker",
                    slot.worker.name,
                    self._running(slot),
                    self._cell_timeout_s,
                )
                self._fail_running(
                    slot, "timeout", f"no result within {self._cell_timeout_s:.0f} s; worker killed and restarted"
                )
                self._restart(slot)

    def _lose(self, slot: _Slot, why: str, detail: str = "") -> None:
        """Give `slot`'s GPU up for `why` (the summary's words; `detail` for the log only)."""
        if slot.blamed and _node_gone(slot.worker):  # the death that was counted was its node's, no cell's
            log.info(
                "%s: its last death is not counted against %s: its node is gone",
                slot.worker.name,
                ", ".join(str(c) for _, c in slot.blamed[:SUSPECTS_NAMED]),
            )
            for key in slot.blamed:
                if key in self._suspects:
                    self._suspects.discard(key)
                elif self._deaths[key] > 1:
                    self._deaths[key] -= 1
                else:
                    self._deaths.pop(key, None)
        slot.lost, slot.probe, slot.retry_at, slot.blamed = True, None, None, []
        self._drop_batches(slot)
        ray.kill(slot.worker.actor)
        slot.queue.gpus -= 1
        left = 0 if slot.queue.gpus else len(slot.queue.cells)
        others = (
            f"; its {len(slot.queue.cells)} queued cells go to the other {slot.queue.gpus} GPU(s) of its queue"
            if slot.queue.gpus
            else ""
        )
        log.error(
            "%s is given up (%s%s); %d of its cells stay unrun%s",
            slot.worker.name,
            why,
            f"; {detail}" if detail else "",
            left,
            others,
        )
        self._progress.lost(slot.worker.key, left, why)

    def _driver_rows(self, slot: _Slot, cell: Cell, status: str, reason: str) -> list[RowBatch]:
        """A row (a profile status row, when profiling; a row per arm, arm a's first, in a paired sweep) for a cell
        the worker could not report on itself."""
        stage, device, run_id = self._cost.stages[cell.stage], slot.worker.device, self._plan.run_id
        if self._profile:
            return [profile_batch(status_records(device, stage, cell, run_id, status, reason))]
        if not self._plan.paired:
            return row_batches([cell_row(device, stage, cell, run_id, status, reason)])
        pair = pair_id(cell, run_id)
        return row_batches(
            [
                {**cell_row(device, stage, cell, f"{run_id}-{arm}", status, reason), "pair": pair, "arm": arm}
                for arm in ARMS
            ]
        )


def _node_gone(worker: Worker) -> str | None:
    """Why `worker`'s node is gone (Ray has marked it dead, or no longer lists it), or None while it is alive."""
    alive = {n["NodeID"]: n["Alive"] for n in ray.nodes()}
    node = worker.node.node_id
    if node not in alive:
        return f"its node {node[:8]} ({worker.node.host}) left the cluster"
    return None if alive[node] else f"its node {node[:8]} ({worker.node.host}) is dead"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
