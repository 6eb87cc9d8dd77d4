"""`farm/sweep.py --profile`: the profiling pass on every GPU worker of the Ray fleet, after the sweep.

Each worker profiles with farm/measure/profiler.py on its own GPU; the driver hands out cells
and is the only writer of the profile table, as in the sweep.
"""
from __future__ import annotations

import logging
import time
from collections import Counter, deque

import ray
from ray.exceptions import RayActorError, RayTaskError

from farm.cells import Cell
from farm.cluster.dispatch import scope_column
from farm.cluster.fleet import SweepError, start_workers
from farm.data.dataset import PROFILE, write_table
from farm.measure.profiler import profile_cells, profiled_keys, record_summary, status_records

log = logging.getLogger("farm.sweep")


def profile_fleet(plan, poll_s: float = 10.0) -> list[str]:
    """`farm/sweep.py --profile`: after the sweep, profile the plan's cells on every GPU worker.

    Starts the workers again (the dispatcher stops its own), hands each one cell at a time
    (replicate: every GPU profiles every cell; shard: a model's GPUs share them), and
    writes each cell's records as they come back: the driver stays the only writer.
    A re-run with the same run id skips cells that have records. Problems are logged,
    never raised: the sweep's rows are already safe.
    """
    stages = {s.name: s for s in plan.stages()}  # the cells below come from these
    try:
        workers = start_workers(plan.measurer, plan.measure, plan.gpus, plan.start_timeout_s)
    except SweepError as exc:
        log.error("profile pass not run: %s", exc)
        return []
    scope = scope_column(plan.mode)
    done = profiled_keys(plan.output, plan.run_id, scope)
    cells = profile_cells(plan.stages(), plan.sizes)
    queues: dict[str, deque[Cell]] = {}
    slots = []
    for w in workers:
        key = w.device[scope]
        if key not in queues:
            queues[key] = deque(c for c in cells if (key, c.stage, c.m, c.n, c.k) not in done)
        slots.append((w, queues[key]))
    log.info("profile pass, run %s: %d cells per %s on %d GPUs", plan.run_id, len(cells),
             "GPU" if plan.mode == "replicate" else "model", len(workers))
    inflight: dict = {}
    lost: set[str] = set()
    files: list[str] = []
    counts: Counter[str] = Counter()
    limit = plan.cell_timeout_s + 120.0  # the worker kills ncu at cell_timeout_s

    def write(records: list[dict]) -> None:
        nonlocal files
        files += write_table(records, plan.output, PROFILE)
        counts[record_summary(records)[0]] += 1

    def failed(w, cell: Cell, status: str, reason: str) -> list[dict]:
        return status_records(w.device, stages[cell.stage], cell, plan.run_id, status, reason)

    try:
        while True:
            for w, queue in slots:
                if w.uuid not in lost and queue and not any(t[0] is w for t in inflight.values()):
                    cell = queue.popleft()
                    inflight[w.actor.profile.remote([cell], plan.run_id, plan.cell_timeout_s)] = (w, cell, time.monotonic())
            if not inflight:
                break
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=poll_s)
            for ref in ready:
                w, cell, _started = inflight.pop(ref)
                try:
                    write(ray.get(ref))
                except RayActorError as exc:
                    lost.add(w.uuid)
                    log.error("%s died profiling %s; its GPU leaves the profile pass: %s", w.name, cell, str(exc).splitlines()[0][:200])
                    write(failed(w, cell, "error", f"worker died while profiling: {str(exc).splitlines()[0][:500]}"))
                except RayTaskError as exc:
                    write(failed(w, cell, "error", f"profiler raised: {str(exc.cause or exc).splitlines()[0][:500]}"))
            now = time.monotonic()
            for ref, (w, cell, started) in list(inflight.items()):
                if now - started > limit:
                    del inflight[ref]
                    lost.add(w.uuid)
                    ray.kill(w.actor)
                    log.error("%s: profiling %s exceeded %.0f s; its GPU leaves the profile pass", w.name, cell, limit)
                    write(failed(w, cell, "timeout", f"no profile within {limit:.0f} s; worker killed"))
    finally:
        for w, _ in slots:
            ray.kill(w.actor)
    unrun = sum(len(q) for q in queues.values())
    log.info("profile pass: %s; %d files written%s", ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "nothing to do",
             len(files), f"; {unrun} cells not profiled (their GPU was lost)" if unrun else "")
    return files
