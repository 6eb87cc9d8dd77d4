"""The sweep driver: run a plan on every GPU of a Ray cluster and write the rows to a Parquet dataset.

    ray job submit --working-dir . -- python farm/sweep.py --plan plans/quick.toml
    python farm/sweep.py --gpus H200 --mode shard        # a lone machine: starts a local Ray

The driver is the only writer; workers return rows (see farm.cluster.dispatch for the fault rules).
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
import threading
import time

import ray

from farm.cluster.cost import CostModel, rates_from_dataset
from farm.cluster.dispatch import PROGRESS_EVERY_S, Dispatcher, SweepResult
from farm.cluster.fleet import SweepError, Worker, start_workers
from farm.cluster.profile_fleet import profile_fleet
from farm.cluster.progress import Progress
from farm.cluster.runs import Clock, run_records
from farm.data.dataset import RUNS, resolve, write_table
from farm.data.rows import COMMIT_ENV, REPO_ROOT, git_commit
from farm.data.writer import BufferedWriter
from farm.measure import measurers
from farm.measure.prefetch import prefetch_libraries
from farm.plan import MODES, Plan, PlanError, load_plan

DEFAULT_PLAN = REPO_ROOT / "plans" / "default.toml"
log = logging.getLogger("farm.sweep")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="farm/sweep.py",
        description="Compile, verify and time GEMM kernel stages on every GPU of a Ray cluster; "
                    "rows go to a hive-partitioned Parquet dataset (gpu_model=/run_id=). "
                    "Flags override the plan file's fields of the same name.",
        epilog="Examples: python farm/sweep.py --plan plans/quick.toml | "
               "ray job submit --working-dir . -- python farm/sweep.py --gpus H100,GeForce-RTX-4090 --mode shard",
    )
    p.add_argument("--plan", default=str(DEFAULT_PLAN), help="TOML plan file (default: %(default)s)")
    p.add_argument("--kernels", help="comma-separated stage names, e.g. naive,tiled (their cuBLAS baselines are added)")
    p.add_argument("--families", help="comma-separated kernel families, e.g. simt_fp32")
    p.add_argument("--sizes", help="comma-separated sizes: cube edges (1024) or MxNxK (127x255x33)")
    p.add_argument("--repeats", type=int, help="times each (stage, size) is measured")
    p.add_argument("--gpus", help="comma-separated GPU models to use, e.g. H100,GeForce-RTX-4090 (default: all); "
                                  "a model is the node label farm.gpu-model, else the NVML name with dashes; "
                                  "case and an 'NVIDIA-' prefix are ignored")
    p.add_argument("--mode", choices=MODES, help="replicate: every GPU runs every cell (default); "
                                                 "shard: the GPUs of one model split its cells")
    p.add_argument("--run-id", help="run identifier; reuse one to resume that run, skipping cells it has rows for: "
                                    "per GPU in replicate mode, per model in shard mode (use shard to continue on "
                                    "another card of the model) (default: a new id from the UTC time)")
    p.add_argument("--output", help="dataset location: local path or pyarrow filesystem URI (s3://...); "
                                    "default $GEMM_FARM_RESULTS, else ~/gemm-farm-results")
    p.add_argument("--cell-timeout", type=float, dest="cell_timeout_s",
                   help="seconds one cell may run before its worker is killed and restarted (default 600)")
    p.add_argument("--start-timeout", type=float, dest="start_timeout_s",
                   help="seconds a worker may take to start or restart before its GPU is given up (default 300)")
    p.add_argument("--flush-every", type=float, dest="flush_s",
                   help="seconds between writes of the buffered rows (default 10): a driver killed outright loses at "
                        "most this much of its rows; Ctrl-C and `ray job stop` lose none")
    p.add_argument("--timing-mode", choices=("hot", "cold"), help="hot: back-to-back launches (default); "
                                                                  "cold: an L2-sized write before every timed launch")
    p.add_argument("--no-telemetry", action="store_true", help="do not sample NVML during timing")
    p.add_argument("--throttle-policy", choices=("flag", "remeasure"),
                   help="flag: keep throttled measurements, flagged (default); remeasure: measure again while throttled")
    p.add_argument("--target-noise", type=float, help="stop sampling a cell once the median's relative standard "
                                                       "error is at or below this (default 0.005)")
    p.add_argument("--measurer", help=f"name of the measurer workers build: {', '.join(measurers.names())} "
                                      f"(default {measurers.DEFAULT})")
    p.add_argument("--profile", action="store_true",
                   help="after the sweep, run each (stage, size) once under Nsight Compute on every GPU whose host has "
                        "ncu; metrics go to the dataset's profile table (farm/measure/profiler.py), never timed")
    p.add_argument("--address", help="Ray cluster address (default: $RAY_ADDRESS, else the cluster started on this "
                                     "machine with `ray start`, else a new local Ray of this command's own, without "
                                     "the Ray dashboard and declaring one CPU: the GPU workers need none)")
    return p


def _runtime_env() -> dict | None:
    """Ship the repo and its commit to the workers, unless a job submitted with --working-dir already did (its
    submitter passes the commit: README, "On a mixed cluster, by hand")."""
    job = json.loads(os.environ.get("RAY_JOB_CONFIG_JSON_ENV_VAR", "{}"))
    if (job.get("runtime_env") or {}).get("working_dir"):
        return None
    return {"working_dir": str(REPO_ROOT), "env_vars": {COMMIT_ENV: git_commit()}}


def connect(address: str | None) -> bool:
    """Join a Ray cluster or start a local one; False when this process was already connected."""
    if ray.is_initialized():
        return False
    if address or os.environ.get("RAY_ADDRESS"):
        ray.init(address=address, runtime_env=_runtime_env())
        return True
    try:  # a cluster that `ray start` left on this machine
        ray.init(address="auto", runtime_env=_runtime_env())
    except ConnectionError:
        # A Ray of this command's own, on this machine only, started for the first row to come soon: no Ray
        # dashboard; no runtime env, so that the GPU workers take the worker processes Ray starts with the
        # driver (a runtime env of their own makes Ray start new ones, seconds each); those processes inherit
        # this environment, which names the repo (imported where it lies, no package built) and its commit;
        # one CPU, so that Ray starts one such process rather than one per core, all competing for the host.
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)
        os.environ[COMMIT_ENV] = git_commit()
        prefetch_libraries()  # this machine's GPUs run the cells: their libraries are read while Ray starts
        ray.init(include_dashboard=False, num_cpus=1)
    return True


def _stop(signum: int, frame) -> None:
    # `ray job stop` sends SIGTERM: unwind like Ctrl-C, so buffered rows and the runs rows are written.
    raise KeyboardInterrupt(f"signal {signum}")


def run_sweep(plan: Plan, workers: list[Worker], clock: Clock) -> SweepResult:
    """Run the plan on started workers; the runs table gets a row per GPU at the end, or on an interrupt."""
    progress = Progress(PROGRESS_EVERY_S, clock.started)
    cost = CostModel({s.name: s for s in plan.stages()}, rates_from_dataset(plan.output, {w.model for w in workers}))
    writer = BufferedWriter(plan.output, plan.flush_s)
    interrupted = True
    try:
        result = Dispatcher(plan, workers, progress, cost, writer).run()
        interrupted = False
    finally:
        write_table(run_records(plan.run_id, plan.mode, workers, progress, clock, interrupted), plan.output, RUNS)
    return result


def main(argv: list[str] | None = None) -> int:
    """Run a sweep; 0 when every cell has a row, 1 when some could not run, 2 when nothing ran, 130 when stopped."""
    args = build_parser().parse_args(argv)
    clock = Clock.start()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    log.setLevel(logging.INFO)
    measure_flags = {"mode": args.timing_mode, "telemetry": False if args.no_telemetry else None,
                     "throttle_policy": args.throttle_policy, "target_noise": args.target_noise}
    overrides = {k: v for k, v in vars(args).items()
                 if k not in ("plan", "address", "timing_mode", "no_telemetry", "throttle_policy", "target_noise", "profile")}
    overrides["measure"] = {k: v for k, v in measure_flags.items() if v is not None}
    try:
        plan = load_plan(args.plan, **overrides)
    except PlanError as exc:
        log.error("plan error: %s", exc)
        return 2
    connect_began = time.monotonic()
    connected_here = connect(args.address)
    connected = time.monotonic()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _stop)
    try:
        # Each worker compiles the plan's stages for its chip in the background while its first cells run.
        options = {**plan.measure, "prewarm": tuple(s.name for s in plan.stages())}
        workers = start_workers(plan.measurer, options, plan.gpus, plan.start_timeout_s)
        clock.ready = time.monotonic()
        log.info("start-up: imports and plan %.1f s, Ray %.1f s, workers %.1f s: ready %.1f s after the command started",
                 connect_began - clock.started, connected - connect_began, clock.ready - connected,
                 clock.ready - clock.started)
        log.info("run %s: %d cells per %s, mode %s, on %d GPUs: %s", plan.run_id, len(plan.cells()),
                 "GPU" if plan.mode == "replicate" else "model", plan.mode, len(workers), ", ".join(w.name for w in workers))
        result = run_sweep(plan, workers, clock)
        if args.profile:
            profile_fleet(plan)  # starts its own workers: the dispatcher has stopped the sweep's
    except SweepError as exc:
        log.error("%s", exc)
        return 2
    except KeyboardInterrupt:
        log.error("stopped; the rows measured so far are written: run again with --run-id %s to finish", plan.run_id)
        return 130
    finally:
        if connected_here:
            ray.shutdown()
    where = plan.output if "://" in plan.output else resolve(plan.output)[1]
    log.info("rows of run %s are in %s (%d files written)", plan.run_id, where, len(result.files))
    if result.not_run:
        log.error("%d cells did not run; run again with --run-id %s to finish them", result.not_run, plan.run_id)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
