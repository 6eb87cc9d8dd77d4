"""The sweep driver: run a plan on every GPU of a Ray cluster and write the rows to a Parquet dataset.

    ray job submit --working-dir . -- python farm/sweep.py --plan plans/quick.toml
    python farm/sweep.py --gpus H200 --mode shard        # a lone machine: starts a local Ray
    python -m farm sweep ...                             # the same command

The driver is the only writer; workers return rows (see farm.cluster.dispatch for the fault rules).
`farm bench` and `farm profile` are this driver on a local Ray of their own (drive(local=True)).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__" and not __package__:
    # Run as a script: import the repo's packages, and keep farm/ itself off sys.path
    # (Ray would hand the script's directory to the workers' sys.path too).
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

import argparse
import json
import logging
import os
import signal
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

import grpc
import ray

from farm.cluster.cost import CostModel, rates_from_dataset
from farm.cluster.dispatch import PROGRESS_EVERY_S, Dispatcher, SweepResult
from farm.cluster.fleet import Recruiter, SweepError, Worker, WorkerSpec, start_workers
from farm.cluster.progress import Progress, cell_log
from farm.cluster.runs import Clock, run_records
from farm.data.dataset import RUNS, resolve
from farm.data.rows import COMMIT_ENV, REPO_ROOT, git_commit
from farm.data.writer import BufferedWriter, OutputError, adopt_fallback, probe_output
from farm.measure import measurers
from farm.measure.prefetch import prefetch_libraries
from farm.measure.profiler import ProfileOptions
from farm.plan import MODES, PLANS, Plan, PlanError, load_plan

DEFAULT_PLAN = PLANS / "default.toml"
MAX_GPU_HOURS = 2.0  # a plan expected to take longer needs --yes
CONNECT_TIMEOUT_S = 10.0  # a named Ray address that does not answer within this is an error
LOCAL_RAY = {"include_dashboard": False, "num_cpus": 1}  # a Ray of the sweep's own: see connect()
# Exit statuses: every cell has a row; some cells could not run (their GPUs were lost); nothing ran (a bad plan,
# output, address or cluster, or a plan too long without --yes); rows went to the fallback location; stopped.
OK, NOT_RUN, NOTHING_RAN, FALLBACK, STOPPED = 0, 1, 2, 3, 130
log = logging.getLogger("farm.sweep")


def build_parser(prog: str = "farm/sweep.py") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="Compile, verify and time GEMM kernel stages on every GPU of a Ray cluster; "
        "rows go to a hive-partitioned Parquet dataset (gpu_model=/run_id=). "
        "Flags override the plan file's fields of the same name.",
        epilog="Examples: python farm/sweep.py --plan plans/quick.toml | "
        "ray job submit --working-dir . -- python farm/sweep.py --gpus H100,GeForce-RTX-4090 --mode shard",
    )
    p.add_argument("--plan", default=str(DEFAULT_PLAN), help="TOML plan file (default: %(default)s)")
    p.add_argument("--kernels", help="comma-separated stage names, e.g. naive,tiled (their cuBLAS baselines are added)")
    p.add_argument(
        "--families", help="comma-separated kernel families, e.g. simt_fp32 (with --kernels: both, the union)"
    )
    p.add_argument("--sizes", help="comma-separated sizes: cube edges (1024) or MxNxK (127x255x33)")
    p.add_argument("--repeats", type=int, help="times each (stage, size) is measured")
    p.add_argument(
        "--paired",
        action="store_true",
        default=None,
        help="time every cell for two arms in one worker process, the arms' and the baseline's batches alternating "
        "in one interleaved timing (the leading arm alternating, ABBA), as runs RUN_ID-a and RUN_ID-b whose rows "
        "share a pair id: with identical code, an A/A calibration; "
        "`farm compare RUN_ID-a RUN_ID-b` then judges per-pair differences (docs/verdicts.md)",
    )
    p.add_argument(
        "--base-kernels",
        metavar="DIR",
        help="a paired sweep whose arm b runs the kernels of DIR, a checkout of another commit's kernels/ "
        "(git worktree add /tmp/base BASE; DIR=/tmp/base/kernels): arm a is this tree; baselines are the same on both",
    )
    p.add_argument(
        "--gpus",
        help="comma-separated GPU models to use, e.g. H100,GeForce-RTX-4090 (default: all); "
        "a model is the node label farm.gpu-model, else the NVML name with dashes; "
        "case and an 'NVIDIA-' prefix are ignored",
    )
    p.add_argument(
        "--mode",
        choices=MODES,
        help="replicate: every GPU runs every cell (default); shard: the GPUs of one model split its cells",
    )
    p.add_argument(
        "--run-id",
        help="run identifier; reuse one to resume that run, skipping cells it has rows for: "
        "per GPU in replicate mode, per model in shard mode (use shard to continue on "
        "another card of the model) (default: a new id from the UTC time)",
    )
    p.add_argument(
        "--output",
        help="dataset location: local path or pyarrow filesystem URI (s3://...); "
        "default $GEMM_FARM_RESULTS, else ~/gemm-farm-results",
    )
    p.add_argument(
        "--cell-timeout",
        type=float,
        dest="cell_timeout_s",
        help="seconds one cell may run before its worker is killed and restarted (default 600)",
    )
    p.add_argument(
        "--start-timeout",
        type=float,
        dest="start_timeout_s",
        help="seconds a worker may take to start or restart before its GPU is given up (default 300)",
    )
    p.add_argument(
        "--flush-every",
        type=float,
        dest="flush_s",
        help="seconds between writes of the buffered rows (default 10): a driver killed outright loses at "
        "most this much of its rows; Ctrl-C and `ray job stop` lose none",
    )
    p.add_argument(
        "--timing-mode",
        choices=("hot", "cold"),
        help="hot: back-to-back launches (default); cold: an L2-sized write before every timed launch",
    )
    p.add_argument("--no-telemetry", action="store_true", help="do not sample NVML during timing")
    p.add_argument(
        "--throttle-policy",
        choices=("flag", "remeasure"),
        help="flag: keep throttled measurements, flagged (default); remeasure: measure again while throttled",
    )
    p.add_argument(
        "--target-noise",
        type=float,
        help="stop sampling a cell once the median's relative standard error is at or below this (default 0.005)",
    )
    p.add_argument(
        "--measurer",
        help=f"name of the measurer workers build: {', '.join(measurers.names())} (default {measurers.DEFAULT})",
    )
    p.add_argument(
        "--profile",
        action="store_true",
        help="after the sweep, run each (stage, size) once under Nsight Compute on every GPU whose host has "
        "ncu; metrics go to the dataset's profile table (farm/measure/profiler.py), never timed",
    )
    p.add_argument(
        "--address",
        help="Ray cluster address (default: $RAY_ADDRESS, else the cluster `ray start` made on "
        "this machine, never a Ray another program started, else a new local Ray of this "
        "command's own, without the Ray dashboard and declaring one CPU: the GPU workers "
        f"need none); an address where no Ray answers within {CONNECT_TIMEOUT_S:.0f} s (TCP, then gRPC) is an error",
    )
    p.add_argument(
        "--max-gpu-hours",
        type=float,
        default=MAX_GPU_HOURS,
        help="a plan whose cells are expected to take more GPU time than this (the cost model of "
        "farm/cluster/cost.py, summed over GPUs) needs --yes (default %(default)s)",
    )
    p.add_argument("--yes", action="store_true", help="run a plan past --max-gpu-hours")
    p.epilog += (
        f" | Exit status: {OK} every cell has a row; {NOT_RUN} some cells did not run (their GPU was lost); "
        f"{NOTHING_RAN} nothing ran (plan, output, address or cluster error, or too long without --yes); "
        f"{FALLBACK} the output failed mid-sweep and rows are in the fallback location the log names; "
        f"{STOPPED} stopped."
    )
    return p


def runtime_env() -> dict | None:
    """Ship the repo and its commit to the workers, unless a job submitted with --working-dir already did (its
    submitter passes the commit: docs/running.md, "On a mixed cluster, by hand")."""
    job = json.loads(os.environ.get("RAY_JOB_CONFIG_JSON_ENV_VAR", "{}"))
    if (job.get("runtime_env") or {}).get("working_dir"):
        return None
    if not (REPO_ROOT / "pyproject.toml").is_file():  # an installed package (site-packages): each host imports its own
        return {"env_vars": {COMMIT_ENV: git_commit()}}
    return {"working_dir": str(REPO_ROOT), "env_vars": {COMMIT_ENV: git_commit()}}


def _answers(address: str, timeout_s: float) -> str | None:
    """Why no Ray cluster answers at `address` (host:port, or a URI with one), each check within `timeout_s`; None
    if one does. A TCP connection, then a gRPC channel made ready (Ray's GCS speaks gRPC; unless its TLS is on): Ray's
    own connection retries for minutes against a port where something else listens."""
    where = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        host, port = where.hostname or "", where.port or 6379
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except (OSError, ValueError) as exc:
        return str(exc) or type(exc).__name__
    if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
        return None
    channel = grpc.insecure_channel(f"{host}:{port}")
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout_s)
        return None
    except grpc.FutureTimeoutError:
        return f"something listens there, but no gRPC server (as Ray's GCS is) answered within {timeout_s:.0f} s"
    finally:
        channel.close()


def _ray_start_address() -> str | None:
    """The cluster `ray start` made on this machine (the address it leaves in Ray's temp dir), if it answers. Never
    ray.init(address="auto"): that also joins whatever Ray another program started here."""
    from ray._private.utils import read_ray_address

    address = read_ray_address()
    if address and _answers(address, CONNECT_TIMEOUT_S) is None:
        return address
    if address:
        log.info("the Ray that `ray start` left at %s no longer answers; starting a Ray of this sweep's own", address)
    return None


def connect(address: str | None, local: bool = False) -> str | None:
    """Join the Ray cluster named (`address`, else $RAY_ADDRESS), else the one `ray start` made on this machine,
    else start a local one; `local`: always start a local one (this machine's GPUs only). Returns "joined" or
    "local", None when this process was already connected; raises SweepError when a named address does not answer
    within CONNECT_TIMEOUT_S."""
    if ray.is_initialized():
        return None
    named = None if local else address or os.environ.get("RAY_ADDRESS")
    named = _ray_start_address() if named in ("", "auto") or (named is None and not local) else named
    if named:
        why = _answers(named, CONNECT_TIMEOUT_S)
        if why:
            raise SweepError(
                f"no Ray cluster answers at {named} ({why}); check --address / RAY_ADDRESS, or leave "
                "both unset to start a Ray of this sweep's own"
            )
        ray.init(address=named, runtime_env=runtime_env())
        return "joined"
    # A Ray of this command's own, on this machine only, started for the first row to come soon: no Ray
    # dashboard; no runtime env, so that the GPU workers take the worker processes Ray starts with the
    # driver (a runtime env of their own makes Ray start new ones, seconds each); those processes inherit
    # this environment, which names the repo (imported where it lies, no package built) and its commit;
    # one CPU, so that Ray starts one such process rather than one per core, all competing for the host.
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
    os.environ[COMMIT_ENV] = git_commit()
    prefetch_libraries()  # this machine's GPUs run the cells: their libraries are read while Ray starts
    ray.init(address="local", **LOCAL_RAY)  # "local": a new Ray, even beside one that `ray start` made here
    return "local"


def _stop(signum: int, frame) -> None:
    # `ray job stop` sends SIGTERM: unwind like Ctrl-C, so buffered rows and the runs rows are written.
    raise KeyboardInterrupt(f"signal {signum}")


def run_sweep(
    plan: Plan,
    workers: list[Worker],
    clock: Clock,
    max_gpu_hours: float | None = None,
    recruiter: Recruiter | None = None,
    profile: ProfileOptions | None = None,
    measure: bool = True,
) -> SweepResult:
    """Run the plan on started workers, then stop them: its cells measured (unless not `measure`), then, with
    `profile`, each (stage, shape) profiled on the workers left, through the same dispatcher and writer. The runs
    table gets a row per GPU at the end of the measuring, or on an interrupt. Returns what the measuring did (the
    profiling's when it alone ran), with every file written.

    Logs the cells and expected GPU time per model first; raises SweepError, before any cell, when that is more
    than `max_gpu_hours` (None: no bound). `recruiter`: GPUs joining mid-sweep (shard mode)."""
    cost = CostModel(
        {s.name: s for s in plan.stages()},
        rates_from_dataset(plan.output, {w.model for w in workers}),
        paired=plan.paired and measure,
        measure=plan.measure if measure else None,
    )
    writer = BufferedWriter(plan.output, plan.flush_s)
    started, dispatchers = list(workers), []
    try:
        result = None
        if measure:
            progress = Progress(PROGRESS_EVERY_S, clock.started)
            dispatcher = Dispatcher(plan, workers, progress, cost, writer, recruiter)
            dispatchers.append(dispatcher)
            hours = _log_cost(plan, workers, dispatcher.expected_s)
            if max_gpu_hours is not None and hours > max_gpu_hours:
                raise SweepError(
                    f"the plan is expected to take {hours:.1f} GPU-hours, more than --max-gpu-hours "
                    f"{max_gpu_hours:g}: run it with --yes (or a larger --max-gpu-hours), or choose fewer "
                    "cells"
                )
            result = _recorded(plan, dispatcher, progress, writer, clock)
            workers, recruiter = dispatcher.live_workers, None
        if profile:
            log.info(
                "profile pass, run %s: %d cells per %s on %d GPUs",
                plan.run_id,
                len(plan.cells(repeats=1)),
                "GPU" if plan.mode == "replicate" else "model",
                len(workers),
            )
            dispatchers.append(
                Dispatcher(
                    plan, workers, Progress(PROGRESS_EVERY_S, time.monotonic()), cost, writer, recruiter, profile
                )
            )
            profiled = dispatchers[-1].run()
            result = result or profiled
    finally:  # every worker, those that joined mid-sweep included
        for w in {id(w): w for w in (*started, *(w for d in dispatchers for w in d.workers))}.values():
            ray.kill(w.actor)
    return replace(result, files=writer.files, flushes=writer.flushes, fallback=writer.fallback)


def _recorded(
    plan: Plan, dispatcher: Dispatcher, progress: Progress, writer: BufferedWriter, clock: Clock
) -> SweepResult:
    """Run the measuring dispatcher; the runs table gets a row per GPU at its end, or on an interrupt."""
    interrupted = True
    try:
        result = dispatcher.run()
        interrupted = False
    finally:
        for run_id in plan.arm_runs():  # a paired sweep's arms: a run each, of the same cells
            writer.write_records(run_records(run_id, plan.mode, dispatcher.workers, progress, clock, interrupted), RUNS)
    return result


def _log_cost(plan: Plan, workers: list[Worker], expected_s: dict[str, float]) -> float:
    """Log the plan's cells and expected GPU time per model (farm.cluster.cost); returns the GPU-hours in all."""
    per_gpu = "GPU" if plan.mode == "replicate" else "model"
    log.info(
        "run %s: %d cells per %s, mode %s, on %d GPUs: %s",
        plan.run_id,
        len(plan.cells()),
        per_gpu,
        plan.mode,
        len(workers),
        ", ".join(w.name for w in workers),
    )
    for model, seconds in sorted(expected_s.items()):
        gpus = sum(w.model == model for w in workers)
        log.info(
            "  %s, %d GPU(s): expected %.2f GPU-hours for the cells to run (about %.0f min of wall time)",
            model,
            gpus,
            seconds / 3600,
            seconds / gpus / 60,
        )
    return sum(expected_s.values()) / 3600


def main(argv: list[str] | None = None, prog: str = "farm/sweep.py") -> int:
    """Run a sweep; returns the exit status (OK, NOT_RUN, NOTHING_RAN, FALLBACK or STOPPED)."""
    args = build_parser(prog).parse_args(argv)
    clock = Clock.start()
    log_to_stderr()
    measure_flags = {
        "mode": args.timing_mode,
        "telemetry": False if args.no_telemetry else None,
        "throttle_policy": args.throttle_policy,
        "target_noise": args.target_noise,
    }
    overrides = {
        k: v
        for k, v in vars(args).items()
        if k
        not in (
            "plan",
            "address",
            "timing_mode",
            "no_telemetry",
            "throttle_policy",
            "target_noise",
            "profile",
            "max_gpu_hours",
            "yes",
        )
    }
    overrides["measure"] = {k: v for k, v in measure_flags.items() if v is not None}
    try:
        plan = load_plan(args.plan, **overrides)
        probe_output(plan.output)  # before Ray starts: an output that cannot take rows is found before any cell
    except PlanError as exc:
        log.error("plan error%s:\n  %s", "s" if "\n" in str(exc) else "", str(exc).replace("\n", "\n  "))
        return NOTHING_RAN
    except OutputError as exc:
        log.error("%s", exc)
        return NOTHING_RAN
    profile = ProfileOptions(timeout_s=plan.cell_timeout_s) if args.profile else None
    return drive(
        plan, clock, address=args.address, profile=profile, max_gpu_hours=None if args.yes else args.max_gpu_hours
    ).status


def log_to_stderr(each_cell: bool = False) -> None:
    """The driver's log lines (progress, faults, summary) on stderr, with their time; `each_cell`: a line per cell
    as it finishes too (farm bench, farm profile), not only every PROGRESS_EVERY_S."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    log.setLevel(logging.INFO)
    cell_log.setLevel(logging.INFO if each_cell else logging.WARNING)


@dataclass(frozen=True)
class Ended:
    """How a drive ended: its exit status, and its cells by status (`farm bench` and `farm profile` judge them)."""

    status: int
    statuses: Counter[str]


def drive(
    plan: Plan,
    clock: Clock | None = None,
    address: str | None = None,
    local: bool = False,
    measure: bool = True,
    profile: ProfileOptions | None = None,
    max_gpu_hours: float | None = None,
) -> Ended:
    """Run a validated plan whose output was probed: connect (`address`; `local`: a Ray of its own on this machine,
    never a cluster), start a worker per GPU, measure the cells (unless not `measure`) and, with `profile`,
    profile each (stage, shape) after. The exit status as main() says it. `clock`: when the command started
    (default: this process's start)."""
    clock = clock or Clock.start()
    adopted = adopt_fallback(plan.output)
    if adopted:
        log.warning("moved %d files an earlier sweep wrote to the fallback location into %s", len(adopted), plan.output)
    connect_began = time.monotonic()
    try:
        connected_here = connect(address, local)
    except SweepError as exc:
        log.error("%s", exc)
        return Ended(NOTHING_RAN, Counter())
    connected = time.monotonic()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop)
    try:
        # Each worker compiles the plan's stages for its chip in the background while its first cells run.
        spec = WorkerSpec(
            plan.measurer,
            plan.measure,
            tuple(s.name for s in plan.stages()) if measure else (),
            plan.base_kernels if plan.paired else None,
        )
        workers = start_workers(spec, plan.gpus, plan.start_timeout_s, none_here=connected_here == "local")
        clock.ready = time.monotonic()
        log.info(
            "start-up: imports and plan %.1f s, Ray %.1f s, workers %.1f s: ready %.1f s after the command started",
            connect_began - clock.started,
            connected - connect_began,
            clock.ready - connected,
            clock.ready - clock.started,
        )
        recruiter = Recruiter(spec, plan.gpus) if plan.mode == "shard" else None
        result = run_sweep(plan, workers, clock, max_gpu_hours, recruiter, profile, measure)
    except SweepError as exc:
        log.error("%s", exc)
        return Ended(NOTHING_RAN, Counter())
    except KeyboardInterrupt:
        log.error("stopped; the rows measured so far are written: run again with --run-id %s to finish", plan.run_id)
        return Ended(STOPPED, Counter())
    finally:
        if connected_here:
            ray.shutdown()
    where = plan.output if "://" in plan.output else resolve(plan.output)[1]
    log.info("rows of run %s are in %s (%d files written)", plan.run_id, result.fallback or where, len(result.files))
    if result.not_run:
        log.error("%d cells did not run; run again with --run-id %s to finish them", result.not_run, plan.run_id)
    status = FALLBACK if result.fallback else NOT_RUN if result.not_run else OK
    return Ended(status, result.statuses)


if __name__ == "__main__":
    sys.exit(main())
