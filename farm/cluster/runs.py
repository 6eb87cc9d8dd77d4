"""The runs table's records: one per GPU for the part of a run one sweep command drove (farm.schema RUNS_SCHEMA)."""

from __future__ import annotations

import datetime as _dt
import platform
import time
from dataclasses import dataclass

import ray

from farm import __version__
from farm.cluster.fleet import Worker
from farm.cluster.process_clock import seconds_since_start
from farm.cluster.progress import Progress
from farm.data.rows import git_commit
from farm.data.schema import STATUSES


@dataclass
class Clock:
    """When the sweep command started (its process, imports included), on the wall clock and time.monotonic(),
    and when its workers were ready."""

    started_at: _dt.datetime
    started: float
    ready: float

    @classmethod
    def start(cls) -> Clock:
        age = seconds_since_start()
        now = time.monotonic() - age
        return cls(_dt.datetime.now(_dt.timezone.utc) - _dt.timedelta(seconds=age), now, now)


def run_records(
    run_id: str, mode: str, workers: list[Worker], progress: Progress, clock: Clock, interrupted: bool
) -> list[dict]:
    """One record per worker, as of now."""
    now = time.monotonic()
    wall = now - clock.started
    startup = clock.ready - clock.started
    records = []
    for w in workers:
        tally = progress.tally(w.key)
        counts = {f"cells_{s}": tally.statuses[s] for s in STATUSES}
        records.append(
            {
                "run_id": run_id,
                "gpu_model": w.model,
                "gpu_uuid": w.uuid,
                "gpu_name": w.device.get("gpu_name"),
                "host": w.device.get("host"),
                "mode": mode,
                "started_at": clock.started_at,
                "ended_at": clock.started_at + _dt.timedelta(seconds=wall),
                "interrupted": interrupted,
                "startup_seconds": startup,
                "first_row_seconds": None if tally.first_row is None else tally.first_row - clock.started,
                "wall_seconds": wall,
                **counts,
                "cells_not_run": tally.not_run,
                "cells_resumed": progress.resumed(w.key),
                "timed_seconds": tally.timed_seconds,
                "overhead_ratio": (wall - startup) / tally.timed_seconds if tally.timed_seconds > 0 else None,
                "farm_version": __version__,
                "git_commit": git_commit(),
                "ray_version": ray.__version__,
                "python_version": platform.python_version(),
                "cupy_version": w.device.get("cupy_version"),
                "driver_version": w.device.get("driver_version"),
                "cuda_runtime_version": w.device.get("cuda_runtime_version"),
            }
        )
    return records
