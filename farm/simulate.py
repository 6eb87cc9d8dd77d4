"""`python -m farm simulate`: the sweep driver at scale without GPUs, to see what it costs and where the time goes.

A local Ray with N declared GPUs, one stand-in worker each (farm.cluster.standin: every cell
sleeps `cell_ms`, which its workers read from their environment), the plan's cells shared in shard mode, the rows written to a dataset: the
same driver, dispatcher and writer as a real sweep. Prints rows/s, cells/s per GPU, the
driver's CPU time and peak memory, files written, the GPUs' busy fraction, the time lost
to the tail (first GPU out of work to the last one done), and how many of the machine's
cores were busy: on a small machine the stand-in workers share its cores with the driver.
"""

from __future__ import annotations

import cProfile
import math
import os
import resource
import shutil
import tempfile
import threading
import time

import pyarrow.compute as pc
import ray

from farm.cluster.fleet import WorkerSpec, start_workers
from farm.cluster.runs import Clock
from farm.cluster.standin import CELL_MS_ENV
from farm.data.dataset import RUNS, open_dataset, read_table
from farm.plan import load_plan
from farm.sweep import run_sweep, runtime_env

STANDIN = "standin"  # the registered name (farm/measure/measurers.py)


def _shapes(cells: int) -> list[str]:
    # naive and its baseline cublas_fp32 support every shape: two cells per shape.
    return [f"128x128x{k}" for k in range(1, math.ceil(cells / 2) + 1)]


def _machine_cpu_s() -> float | None:
    """CPU seconds every core of this machine has spent busy so far (Linux /proc/stat), None elsewhere: whether
    a run was held back by the driver or by the machine its stand-in workers share with it."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except OSError:
        return None
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _rss_mib() -> float | None:
    """This process's resident memory now (Linux /proc), None elsewhere."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return None


class _RssSampler(threading.Thread):
    """Samples the driver's resident memory every `every_s` while the sweep runs: flat over the rows or not."""

    def __init__(self, every_s: float = 0.2) -> None:
        super().__init__(daemon=True)
        self._every_s, self._done, self.samples = every_s, threading.Event(), []

    def run(self) -> None:
        self.samples.append(_rss_mib())
        while not self._done.wait(self._every_s):
            self.samples.append(_rss_mib())

    def quarters(self) -> list[float]:
        """The samples at the end of each quarter of the run."""
        got = [s for s in self.samples if s is not None]
        return [got[max(math.ceil(len(got) * q / 4) - 1, 0)] for q in (1, 2, 3, 4)] if got else []

    def stop(self) -> None:
        self._done.set()
        self.join()
        self.samples.append(_rss_mib())  # the end of the run, however short


def simulate(
    gpus: int,
    cells: int,
    cell_ms: float,
    output: str | None = None,
    flush_s: float = 10.0,
    profile_to: str | None = None,
) -> dict:
    """Run `cells` stand-in cells (rounded up to even) on `gpus` declared GPUs; the figures as a dict."""
    where = output or tempfile.mkdtemp(prefix="farm-simulate-")
    clock = Clock.start()
    shipped = runtime_env() or {}
    shipped["env_vars"] = {**shipped.get("env_vars", {}), CELL_MS_ENV: str(cell_ms)}
    ray.init(address="local", num_gpus=gpus, include_dashboard=False, log_to_driver=False, runtime_env=shipped)
    try:
        plan = load_plan(
            None,
            kernels=["naive"],
            sizes=_shapes(cells),
            mode="shard",
            output=where,
            flush_s=flush_s,
            measurer=STANDIN,
            run_id=f"simulate-{gpus}x{cells}",
        )
        workers = start_workers(WorkerSpec(STANDIN), (), plan.start_timeout_s)
        clock.ready = time.monotonic()
        cpu_before, machine_before = time.process_time(), _machine_cpu_s()
        profiler = cProfile.Profile() if profile_to else None
        if profiler:
            profiler.enable()
        rss = _RssSampler()
        rss.start()
        result = run_sweep(plan, workers, clock)
        rss.stop()
        if profiler:
            profiler.disable()
            profiler.dump_stats(profile_to)
        cpu = time.process_time() - cpu_before
        machine_after = _machine_cpu_s()
        peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # the driver's, before reading back
    finally:
        ray.shutdown()
    rows = open_dataset(where).to_table(columns=["gpu_uuid", "timestamp"])
    runs = read_table(where, RUNS).to_pylist()
    last = rows.group_by("gpu_uuid").aggregate([("timestamp", "max")]).column("timestamp_max")
    run_s = runs[0]["wall_seconds"] - runs[0]["startup_seconds"]
    timed = sum(r["timed_seconds"] for r in runs)
    figures = {
        "gpus": gpus,
        "cells": rows.num_rows,
        "cell_ms": cell_ms,
        "startup_s": runs[0]["startup_seconds"],
        "run_s": run_s,
        "rows_per_s": rows.num_rows / run_s,
        "cells_per_s_per_gpu": rows.num_rows / run_s / gpus,
        "driver_cpu_s": cpu,
        "driver_cpu_per_row_us": 1e6 * cpu / max(rows.num_rows, 1),
        "machine_busy_cores": None if machine_before is None else (machine_after - machine_before) / run_s,
        "machine_cores": os.cpu_count(),
        "peak_rss_mib": peak_rss_mib,
        "rss_quarters_mib": rss.quarters(),
        "row_files": sum("/rows/" in f for f in result.files),
        "flushes": result.flushes,
        "busy_fraction": timed / (gpus * run_s) if cell_ms else None,
        "tail_s": (pc.max(last).as_py() - pc.min(last).as_py()).total_seconds(),
    }
    if output is None:
        shutil.rmtree(where, ignore_errors=True)
    return figures


def report(f: dict) -> str:
    busy = "" if f["busy_fraction"] is None else f", GPUs busy {100 * f['busy_fraction']:.1f} % of the run"
    machine = (
        ""
        if f["machine_busy_cores"] is None
        else f"; the machine's cores busy {f['machine_busy_cores']:.2f} of {f['machine_cores']} (driver, workers, Ray)"
    )
    return (
        f"{f['cells']} cells of {f['cell_ms']:g} ms on {f['gpus']} GPUs: start-up {f['startup_s']:.1f} s, run "
        f"{f['run_s']:.2f} s\n"
        f"  {f['rows_per_s']:.0f} rows/s, {f['cells_per_s_per_gpu']:.1f} cells/s per GPU{busy}\n"
        f"  driver CPU {f['driver_cpu_s']:.2f} s ({f['driver_cpu_per_row_us']:.0f} us per row){machine}, peak RSS "
        f"{f['peak_rss_mib']:.0f} MiB, RSS at the end of each quarter of the run "
        f"{', '.join(f'{m:.0f}' for m in f['rss_quarters_mib']) or 'unknown'} MiB\n"
        f"  {f['row_files']} row files in {f['flushes']} flushes; tail (first GPU out of work to the last done) "
        f"{f['tail_s']:.2f} s"
    )
