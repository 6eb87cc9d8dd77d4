"""`python -m farm` / `gemm-farm`: catalog, compile (no GPU needed), sweep (Ray), bench and profile (the sweep on
this machine's GPUs)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import NoReturn

from farm.measure.checks import KERNELS as CHECK_KERNELS, SOURCE as CHECK_SOURCE
from farm.measure.compiler import CI_ARCHS, CompileError, check_arch, code_sha256, compile_source
from kernels.registry import select
from kernels.tuning import TUNABLES, tuning_stages

RESULTS_DEFAULT = "(default: $GEMM_FARM_RESULTS or ~/gemm-farm-results)"


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _at_least(low: float, kind: type = int):
    """An argparse type: a number of `kind` no smaller than `low` (argparse reports the rest, exit status 2)."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{text} is below {low}")
        return value

    return parse


def _above_zero(text: str) -> float:
    """An argparse type: a number greater than 0."""
    value = _at_least(0.0, float)(text)
    if value == 0:
        raise argparse.ArgumentTypeError("0 is not above 0")
    return value


def _need_dataset(path: str, what: str = "") -> None:
    """Raise ValueError (exit status 2) when no dataset's rows are at `path`: reading would find nothing."""
    from farm.data.dataset import exists

    if not exists(path):
        raise ValueError(f"no dataset at {path}{what} (no rows table there)")


def cmd_catalog(args: argparse.Namespace) -> int:
    stages = select(_split(args.kernels), _split(args.families))
    if args.json:
        print(json.dumps([s.describe() for s in stages], indent=2))
        return 0
    print(
        f"{'stage':<26} {'family':<12} {'pos':>3} {'group':<16} {'dtype':<5} {'shapes':<28} {'published':<34} what changed"
    )
    for s in stages:
        p = s.published
        published = (
            f"{p.pct_of_baseline:.1f}% of cuBLAS, {p.device} {p.m}^3"
            if p and p.pct_of_baseline is not None
            else (f"{p.ms} ms, {p.device} {p.m}^3" if p else "")
        )
        print(
            f"{s.name:<26} {s.family:<12} {s.position:>3} {s.group:<16} {s.dtype:<5} {s.describe_shapes():<28} {published:<34} {s.what_changed}"
        )
    return 0


def _compile_one(
    stage_name: str,
    source_path,
    arch: str,
    kernel_names: tuple[str, ...],
    dynamic_smem: dict[str, int],
    options: tuple[str, ...] = (),
) -> list[dict]:
    """One stage for one arch: a result per kernel, or one failure (runs in a worker process with --jobs)."""
    try:
        compiled = compile_source(source_path, arch, kernel_names, options)
    except CompileError as exc:
        return [{"stage": stage_name, "arch": arch, "ok": False, "error": str(exc)}]
    missing = [k for k in kernel_names if k not in compiled.resources]
    if missing:
        return [{"stage": stage_name, "arch": arch, "ok": False, "error": f"NVRTC gave no ptxas report for {missing}"}]
    code = code_sha256(compiled.cubin_path.read_bytes())
    return [
        {
            "stage": stage_name,
            "arch": arch,
            "kernel": kernel,
            "ok": True,
            "registers": r.registers,
            "static_smem_bytes": r.static_smem_bytes,
            "dynamic_smem_bytes": dynamic_smem.get(kernel, 0),
            "stack_frame_bytes": r.stack_frame_bytes,
            "spill_bytes": r.spill_store_bytes + r.spill_load_bytes,
            "cached": compiled.cache_hit,
            "code_sha256": code,
        }
        for kernel, r in compiled.resources.items()
    ]


def _compile_work(work: tuple) -> list[dict]:
    return _compile_one(*work)


def stage_work(stage, arch: str) -> tuple:
    """_compile_one's arguments for a stage on `arch`; a kernel's dynamic shared memory: the most a launch asks."""
    smem = {}
    for launch in stage.launches:
        smem[launch.kernel] = max(smem.get(launch.kernel, 0), launch.dynamic_smem)
    return (stage.name, stage.source_path, stage.compile_arch(arch), stage.kernel_names, smem, stage.compile_options)


HARNESS_CHECKS = "checks"  # the stage column of farm/measure/checks.cu's kernels in `farm compile`


def cmd_compile(args: argparse.Namespace) -> int:
    """Compile every kernel (and, without a filter, the harness's own: farm/measure/checks.cu) for each arch through
    NVRTC; report resources; non-zero exit on any failure.
    With --jobs N the compilations run in N processes (NVRTC is single-threaded); the CUBIN cache they
    fill is the one sweeps read, so this also pre-warms a host before a large sweep."""
    stages = [s for s in select(_split(args.kernels), _split(args.families)) if not s.is_baseline]
    if not stages:
        raise ValueError("nothing to compile: the selection holds only library baselines")
    if args.tuning and not any(s.name in TUNABLES for s in stages):
        raise ValueError(f"--tuning: none of the selected kernels is tunable (tunable: {', '.join(TUNABLES)})")
    archs = _split(args.arch) or list(CI_ARCHS)
    for arch in archs:
        check_arch(arch)
    if args.jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {args.jobs}")
    work = []
    for arch in archs:
        if not args.kernels and not args.families:  # the whole catalog: with the kernels every cell runs to check it
            work.append((HARNESS_CHECKS, CHECK_SOURCE, arch, CHECK_KERNELS, {}, ()))
        # --tuning: the selected tunable kernels' configurations that are valid on this arch (kernels/tuning.py)
        tuned = tuning_stages([s.name for s in stages if s.name in TUNABLES], arch) if args.tuning else []
        for stage in stages + tuned:
            if stage.compile_arch(arch) is not None:  # else an arch-specific stage (walk D: sm_90a) of another chip
                work.append(stage_work(stage, arch))
    if args.jobs == 1:
        per_stage = [_compile_one(*w) for w in work]
    else:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(args.jobs) as pool:  # whole work items: zip(*work) cut every one to the shortest
            per_stage = list(pool.map(_compile_work, work))
    results = [r for rs in per_stage for r in rs]
    failures = sum(not r["ok"] for r in results)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            if r["ok"]:
                print(
                    f"{r['arch']:<7} {r['stage']:<22} {r['kernel']:<40} regs {r['registers']:>3}  smem {r['static_smem_bytes'] + r['dynamic_smem_bytes']:>6}  spill {r['spill_bytes']}"
                )
            else:
                print(f"{r['arch']:<7} {r['stage']:<22} FAILED: {r['error']}", file=sys.stderr)
    if failures:
        print(f"{failures} compilation(s) failed", file=sys.stderr)
    return 1 if failures else 0


def _no_gpu() -> str | None:
    """Why this process cannot use a GPU (no CuPy, no driver, no device), in one line; None when it can."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "CUDA sees no GPU"
    except Exception as exc:  # noqa: BLE001 - CuPy's import and runtime errors alike: the reason is the message
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


def _local_plan(args: argparse.Namespace, **fields):
    """The plan `farm bench` or `farm profile` runs, from --plan and the flags, with its output probed."""
    from farm.data.writer import probe_output
    from farm.plan import load_plan

    plan = load_plan(
        args.plan,
        kernels=_split(args.kernels),
        families=_split(args.families),
        sizes=_split(args.sizes),
        run_id=args.run_id,
        output=args.output,
        **fields,
    )
    probe_output(plan.output)
    return plan


def cmd_bench(args: argparse.Namespace) -> int:
    """The sweep on this machine's GPUs (farm/sweep.py drive: a local Ray of its own, never a cluster), in shard mode:
    an existing run id resumes with the cells its GPU model already has skipped (any card of the model, so a run
    cut off on one lent machine can finish on another). Exit 1 also when a cell failed verification or erred."""
    from farm import sweep

    plan = _local_plan(args, repeats=args.repeats, mode="shard")
    why = _no_gpu()
    if why:
        print(f"error: farm bench needs an NVIDIA GPU and its driver on this machine: {why}", file=sys.stderr)
        return 2
    sweep.log_to_stderr(each_cell=True)
    ended = sweep.drive(plan, local=True)
    failed = ended.statuses["error"] + ended.statuses["failed_verification"]
    return 1 if ended.status == sweep.OK and failed else ended.status


def cmd_profile(args: argparse.Namespace) -> int:
    """Each (stage, shape) once under Nsight Compute on this machine's GPUs: the sweep's driver on a local Ray,
    profiling instead of measuring; metrics to the profile table. Exit 1 when a cell was neither profiled nor
    skipped for its shape."""
    import os

    from farm import sweep
    from farm.measure.profiler import ProfileOptions

    plan = _local_plan(args)
    why = _no_gpu()
    if why:
        print(f"error: farm profile needs an NVIDIA GPU and its driver on this machine: {why}", file=sys.stderr)
        return 2
    ncu = os.path.abspath(args.ncu) if args.ncu and os.sep in args.ncu else args.ncu  # the workers' cwd is Ray's
    sweep.log_to_stderr(each_cell=True)
    ended = sweep.drive(
        plan, local=True, measure=False, profile=ProfileOptions(ncu=ncu, timeout_s=args.timeout or plan.cell_timeout_s)
    )
    return 1 if ended.status == sweep.OK and set(ended.statuses) - {"ok", "skipped"} else ended.status


def cmd_report(args: argparse.Namespace) -> int:
    from farm.analysis.report import headline_table, ladder_table, runs_table

    _need_dataset(args.path)
    table = (headline_table if args.headline else ladder_table)(args.path, args.run_id)
    if table.startswith("no rows"):  # a run the dataset lacks: missing data, as a missing dataset is
        print(f"{table} in {args.path}", file=sys.stderr)
        return 2
    print(table)
    runs = runs_table(args.path, args.run_id)
    if runs:
        print(f"\n### Runs: one row per sweep and GPU; overhead = (wall - start-up) / timed GPU seconds\n\n{runs}")
    return 0


def _dataset_rows(path: str) -> list[dict]:
    """A dataset's rows as dicts, each tagged with the path it came from (run ids may repeat across datasets)."""
    from farm.data.dataset import read_table

    return [{**r, "dataset": path} for r in read_table(path).to_pylist()]


def _run_rows(rows: list[dict], runs: str, path: str) -> list[dict]:
    """Rows of one run, or of several (comma-separated: a side of several runs)."""
    picked = []
    for run in _split(runs):
        mine = [r for r in rows if r["run_id"] == run]
        if not mine:
            raise ValueError(
                f"no rows for run {run} in {path}; runs there: {', '.join(sorted({r['run_id'] for r in rows})) or 'none'}"
            )
        picked += mine
    return picked


def _compare_options(args: argparse.Namespace) -> None:
    """Raise ValueError for a combination of compare's options one of which its mode would ignore."""
    one_run = args.aa or args.gpu_to_gpu
    if args.aa and args.gpu_to_gpu:
        raise ValueError("--aa and --gpu-to-gpu are two comparisons: give one")
    if one_run:
        mode = "--aa" if args.aa else "--gpu-to-gpu"
        ignored = [
            name
            for name, given in (
                ("RUN_B", args.run_b),
                ("--data-b", args.data_b),
                ("--plant", args.plant),
                ("--equal-clocks", args.equal_clocks),
                ("--cross-fit", args.cross_fit),
            )
            if given
        ]
        if ignored:
            raise ValueError(f"{mode} compares within RUN_A alone: {', '.join(ignored)} would be ignored")
        if len(_split(args.run_a)) > 1:
            raise ValueError("--aa and --gpu-to-gpu take one run")
    elif not args.run_b:
        raise ValueError("give two runs, or one run with --aa or --gpu-to-gpu")
    if args.plant and args.equal_clocks:
        raise ValueError("--plant scales B's samples as measured: --equal-clocks would be ignored")


def cmd_compare(args: argparse.Namespace) -> int:
    """Noise-aware comparison; the noise model and rules in farm/analysis/compare.py and noise.py."""
    from farm.analysis import compare, plant
    from farm.analysis.noise import NoiseModel
    from farm.data.dataset import default_output

    _compare_options(args)
    path_a = args.data or default_output()
    path_b = args.data_b or path_a
    _need_dataset(path_a, "" if args.data else " (the default output; --data names another)")
    for path in {path_b, *(_split(args.history) or [])} - {path_a}:
        _need_dataset(path)
    rows = _dataset_rows(path_a)
    rows_b_all = _dataset_rows(path_b) if path_b != path_a else rows
    history = [r for path in _split(args.history) or [] for r in _dataset_rows(path)]
    rows_a = _run_rows(rows, args.run_a, path_a)
    rows_b = _run_rows(rows_b_all, args.run_b, path_b) if args.run_b else []
    # the A/A history of every dataset given, never the compared pair itself
    everything = (rows if rows_b_all is rows else rows + rows_b_all) + history
    model = NoiseModel.learn(everything, apart=(rows_a, rows_b))
    compared = {(r["dataset"], r["run_id"]) for r in (*rows_a, *rows_b)}
    # --cross-fit: every other run of the datasets given is history; the compared runs' other half of stages too
    others = [r for r in everything if (r.get("dataset"), r["run_id"]) not in compared] if args.cross_fit else None
    extra: dict = {}
    if args.aa or args.gpu_to_gpu:
        result = (compare.compare_repeats if args.aa else compare.compare_gpus)(
            rows_a, args.run_a, args.tolerance, model
        )
        if not result:
            print(
                f"run {args.run_a} has no cell measured {'twice on one GPU' if args.aa else 'on two GPUs of one model'} "
                "with samples: nothing to compare",
                file=sys.stderr,
            )
            return 1
    elif args.run_b:
        if args.plant:
            slowdowns = [float(x) / 100 for x in _split(args.plant)]
            table = plant.detection(rows_a, rows_b, slowdowns, args.tolerance, model, others)
            print(json.dumps(table, indent=2) if args.json else plant.format_detection(table))
            return 0
        result = (
            plant.cross_fitted(rows_a, rows_b, args.tolerance, others, equal_clocks=args.equal_clocks)
            if args.cross_fit
            else compare.compare_rows(rows_a, rows_b, args.tolerance, model, args.equal_clocks)
        )
        if not result:
            print(
                f"runs {args.run_a} and {args.run_b} measured no cell in common (same GPU model, stage and shape) with "
                "samples: nothing to compare",
                file=sys.stderr,
            )
            return 1
    stats = compare.summary(result)
    extra["rates"] = compare.rates(result)
    if args.run_b:
        extra["common_shift"] = compare.common_shift(result)
    if args.json:
        print(
            json.dumps(
                {
                    "summary": stats,
                    **extra,
                    "cells": [
                        {
                            "key": list(c.key),
                            "a_ms": c.a.median_ms,
                            "b_ms": c.b.median_ms,
                            "diff": c.diff,
                            "band": c.band,
                            "verdict": c.verdict,
                            "context": list(c.context),
                            "confounded": c.confounded,
                            "reason": c.reason,
                            "noise": c.noise,
                            "design": c.design,
                        }
                        for c in result
                    ],
                },
                indent=2,
                default=str,
            )
        )
    else:
        print(compare.format_table(result))
        print("\n" + compare.format_designs(c.design for c in result))
        if args.run_b:
            print("\n" + compare.format_shift(compare.common_shift(result)))
        print(
            "\nPer GPU model and family (between repeats, or runs of identical code, every FASTER/SLOWER is a false difference):"
        )
        print(compare.format_rates(extra["rates"]))
        print(json.dumps(stats))
    return 0


def cmd_crosscheck(args: argparse.Namespace) -> int:
    from farm.analysis import crosscheck as cc
    from farm.plan import load_plan, parse_size

    if args.plan:  # every shape of the plan, cubes and M x N x K alike
        shapes = sorted({(c.m, c.n, c.k) for c in load_plan(args.plan).cells()})
    else:
        shapes = [parse_size(s) for s in _split(args.sizes) or ["256", "1024", "4096"]]
    stages = _split(args.stages)
    if stages:  # a kernel's % of its baseline by both harnesses, in its own precision
        from kernels.registry import catalog

        wrong = sorted(set(stages) - {s.name for s in catalog() if not s.is_baseline})
        if wrong or args.precisions or args.modes:
            why = (
                f"takes the catalog's kernels (not {', '.join(wrong)})"
                if wrong
                else "times hot: --precisions and --modes do not apply"
            )
            print(f"--stages {why}", file=sys.stderr)
            return 2
        columns, key = cc.STAGE_COLUMNS, ("stage", "size")
    else:
        precisions, modes = tuple(_split(args.precisions) or cc.PRECISIONS), tuple(_split(args.modes) or cc.MODES)
        for what, asked, valid in (("precision", precisions, cc.PRECISIONS), ("mode", modes, cc.MODES)):
            if set(asked) - set(valid):
                print(
                    f"unknown {what} {', '.join(sorted(set(asked) - set(valid)))}; valid: {', '.join(valid)}",
                    file=sys.stderr,
                )
                return 2
        columns, key = cc.COLUMNS, ("precision", "size", "mode")
    if args.resume and not args.csv:
        print("--resume goes on from the CSV that --csv names", file=sys.stderr)
        return 2
    try:
        kept = cc.kept_records(args.csv, columns) if args.resume else []
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    done = frozenset(tuple(r[c] for c in key) for r in kept)
    measured = (
        cc.stage_crosscheck(stages, shapes, max_time_s=args.max_time_s, done=done)
        if stages
        else cc.crosscheck(shapes, precisions, args.max_time_s, modes, done)
    )
    records = []
    with contextlib.ExitStack() as stack:
        writer = None
        if args.csv:  # its folder made if new: a fresh GPU host lost a cross-check to a missing one (2026-11-26)
            Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
            out = stack.enter_context(Path(args.csv).open("a" if kept else "w"))
            writer = cc.csv_writer(out, header=not kept, columns=columns)
        for record in measured:
            records.append(record)
            # a line as measured: one stopped by its deadline keeps them (2026-11-27: h100-llmc's all lost at 300 s)
            if writer:
                writer.writerow(record)
                out.flush()
    if kept:
        print(f"{len(kept)} kept from {args.csv}, {len(records)} measured now")
    print(cc.as_stage_table(records) if stages else cc.as_table(records))
    return 0 if all(r["verified"] for r in records) and all(r["verified"] == "True" for r in kept) else 1


def cmd_validate(args: argparse.Namespace) -> int:
    from farm.data.validate import launch_notes, validate

    failed = 0
    for path in args.paths:
        problems = validate(path)
        for note in launch_notes(path) if not problems else ():
            print(f"{path}: note: {note}")
        for p in problems[: args.max_problems]:
            print(f"{path}: {p}")
        if len(problems) > args.max_problems:
            print(f"{path}: ... {len(problems) - args.max_problems} more problems")
        print(f"{path}: {'OK' if not problems else f'{len(problems)} problem(s)'}")
        failed += bool(problems)
    return 1 if failed else 0


def cmd_compact(args: argparse.Namespace) -> int:
    from farm.data.compact import compact

    _need_dataset(args.path)
    for table, (before, after) in compact(args.path, args.telemetry_stride, args.max_samples).items():
        print(f"{table}: {before} files -> {after}")
    return 0


def cmd_published(args: argparse.Namespace) -> int:
    from farm.data.published import published_csv

    sys.stdout.write(published_csv())
    return 0


def cmd_simulate(args: argparse.Namespace) -> int:
    from farm.simulate import report, simulate

    print(report(simulate(args.gpus, args.cells, args.cell_ms, args.output, args.flush_every, args.profile_driver)))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from farm.data.schema import SCHEMA_VERSION, columns_markdown, runs_columns_markdown

    print(f"schema version {SCHEMA_VERSION}\n\n## rows\n\n{columns_markdown()}\n\n## runs\n\n{runs_columns_markdown()}")
    return 0


DASHBOARD_APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def dashboard_command(args: argparse.Namespace) -> list[str]:
    """`streamlit run dashboard/app.py` bound to --host (this machine only by default, wherever it is started: the
    repo's .streamlit/config.toml is read only from the repo root), usage statistics off, no file watcher."""
    cmd = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(DASHBOARD_APP),
        f"--server.address={args.host}",
        f"--server.port={args.port}",
        "--browser.gatherUsageStats=false",
        "--server.fileWatcherType=none",
        "--server.runOnSave=false",
        "--client.toolbarMode=minimal",
        "--",
    ]
    return cmd + [x for path in args.data for x in ("--data", path)]


def cmd_dashboard(args: argparse.Namespace) -> NoReturn:
    import importlib.util
    import os

    import pyarrow.fs as pafs

    from farm.data.dataset import resolve

    if importlib.util.find_spec("streamlit") is None:
        raise ValueError('the dashboard needs its extra: pip install "gemm-farm[dashboard]" (or -e ".[dashboard]")')
    if args.port > 65535:
        raise ValueError(f"--port {args.port}: ports end at 65535")
    for path in args.data:  # a dataset or a folder of datasets: it must at least be there
        fs, root = resolve(path)
        if fs.get_file_info(root).type == pafs.FileType.NotFound:
            raise ValueError(f"--data {path}: no such dataset or folder")
    if args.host not in LOCAL_HOSTS:
        print(
            f"warning: the dashboard listens on {args.host}:{args.port} with no login: anyone who can reach it reads "
            "every dataset it shows and can download them (docs/dashboard.md)",
            file=sys.stderr,
        )
    os.execv(sys.executable, dashboard_command(args))  # the server takes this process over: Ctrl-C stops it


def _add_plan_selection(p: argparse.ArgumentParser) -> None:
    """The plan file and the flags that narrow it, as `bench` and `profile` take them."""
    p.add_argument("--plan", help="TOML plan file (plans/*.toml); flags override its fields")
    p.add_argument("--kernels", help="comma-separated stage names (their cuBLAS baselines are added)")
    p.add_argument("--families", help="comma-separated families")
    p.add_argument("--sizes", help="comma-separated sizes: cube edges (1024) or MxNxK (127x255x33)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m farm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("catalog", help="list every kernel stage and baseline")
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per stage")
    p.add_argument("--kernels", help="comma-separated stage names (default: all)")
    p.add_argument("--families", help="comma-separated families (default: all)")
    p.set_defaults(func=cmd_catalog)

    p = sub.add_parser(
        "compile",
        help="compile every kernel (without a filter, the harness's own checks too) through NVRTC (no GPU needed) and report resources",
    )
    p.add_argument("--arch", help=f"comma-separated sm_XX targets (default: {','.join(CI_ARCHS)})")
    p.add_argument("--kernels", help="comma-separated stage names (default: all)")
    p.add_argument("--families", help="comma-separated families (default: all)")
    p.add_argument("--json", action="store_true", help="print a JSON list, one object per kernel and arch")
    p.add_argument(
        "--tuning",
        action="store_true",
        help="also compile every valid tile configuration of the selected tunable kernels",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="compile in this many processes (default 1); fills the same CUBIN cache sweeps use",
    )
    p.set_defaults(func=cmd_compile)

    p = sub.add_parser(
        "sweep",
        add_help=False,
        help="the farm: every GPU of the Ray cluster (or a local Ray) runs a plan; the flags of "
        "farm/sweep.py (python -m farm sweep --help)",
    )
    p.set_defaults(func=None)  # main() hands the rest of the command line to farm/sweep.py's own parser

    p = sub.add_parser(
        "bench",
        help="the sweep on this machine's GPUs (a local Ray of its own, never a cluster; "
        "shard mode): compile, verify and time stages; write Parquet",
    )
    _add_plan_selection(p)
    p.add_argument("--repeats", type=int, help="times each cell is measured (default 1)")
    p.add_argument(
        "--run-id",
        help="run identifier (default: a new one); an existing one resumes: cells this GPU model has rows for are skipped",
    )
    p.add_argument("--output", help=f"dataset path or pyarrow filesystem URI {RESULTS_DEFAULT}")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser(
        "profile",
        help="run each stage once under Nsight Compute (ncu) on this machine's GPUs (the "
        "sweep's driver on a local Ray); metrics to the dataset's profile table (no timing)",
    )
    _add_plan_selection(p)
    p.add_argument(
        "--run-id",
        help="run identifier: use the sweep's to join its rows; cells it has profiled are skipped (default: a new one)",
    )
    p.add_argument("--output", help=f"dataset path or pyarrow filesystem URI {RESULTS_DEFAULT}")
    p.add_argument(
        "--ncu",
        help="path to ncu (default: $GEMM_FARM_NCU, PATH, /opt/nvidia/nsight-compute/*/ncu, /usr/local/cuda/bin/ncu)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        help="seconds one cell may take under ncu before it is killed (default: the plan's cell_timeout_s, 600)",
    )
    p.set_defaults(func=cmd_profile)

    p = sub.add_parser(
        "report",
        help="tables of ms, TFLOPS and %% of cuBLAS per GPU and shape from a dataset, then "
        "its runs (start-up, cells, overhead per sweep and GPU)",
    )
    p.add_argument("path", help="dataset path or URI")
    p.add_argument("--run-id", help="only this run")
    p.add_argument(
        "--headline",
        action="store_true",
        help="one table instead: per GPU model, family and shape, the stage "
        "closest to its cuBLAS, with the spread across measurements; "
        "then, where rows have LLM layer shapes (plans/llm.toml), per "
        "LLM model the geometric mean of those over its shapes",
    )
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "compare",
        help="SAME/FASTER/SLOWER/UNCLEAR per cell between two runs (of one dataset or two), "
        "repeats (--aa) or GPUs, with what else differed",
        description="Compare run B against run A per (GPU model, stage, shape). With --aa: every pair of "
        "repeats of one run on each GPU, and the false-difference rate per GPU model and family "
        "(how often identical code is called different). With --gpu-to-gpu: every pair of "
        "same-model GPUs of one run. Noise is learned from the datasets' own A/A history (repeats, "
        "and runs of one commit); FASTER/SLOWER needs the 99% band of the difference to exclude 0 and the "
        "difference to exceed half the tolerance, SAME the equivalence test's 90% band to lie within the "
        "tolerance: see farm/analysis/compare.py. The two arms of a paired sweep (farm/sweep.py --paired or "
        "--base-kernels: RUN_ID-a RUN_ID-b) are judged per pair, with the paired design's noise.",
    )
    p.add_argument(
        "run_a",
        help="run id, or run ids separated by commas: a side of several runs (the run is then the "
        "unit of noise: run-level noise shrinks with the number of runs, not of repeats)",
    )
    p.add_argument("run_b", nargs="?", help="as RUN_A")
    p.add_argument("--aa", action="store_true", help="compare the repeats of RUN_A with each other")
    p.add_argument("--gpu-to-gpu", action="store_true", help="compare the same-model GPUs of RUN_A with each other")
    p.add_argument(
        "--tolerance",
        type=_above_zero,
        default=0.02,
        help="the smallest relative change that matters (default 0.02): "
        "SAME means shown within it, FASTER/SLOWER a difference beyond the noise and at least half of it",
    )
    p.add_argument("--data", help=f"dataset path or URI of RUN_A {RESULTS_DEFAULT}")
    p.add_argument("--data-b", help="dataset path or URI of RUN_B, where it is another dataset (default: --data)")
    p.add_argument(
        "--history",
        metavar="PATH,...",
        help="more datasets to learn the noise from (their repeats and their runs "
        "of one commit: A/A history), beside the compared ones",
    )
    p.add_argument(
        "--equal-clocks",
        action="store_true",
        help="compare B's time at A's SM clock (scaled by the clock ratio) where sound; each cell says when it is not",
    )
    p.add_argument(
        "--plant",
        metavar="PCT,...",
        help="detection rates instead: RUN_B's samples scaled by 1+x for each "
        "slowdown x (%%), e.g. 1,2,3,5; A and B should be runs of identical code",
    )
    p.add_argument(
        "--cross-fit",
        action="store_true",
        help="judge each half of the stages (sorted by name, alternately) with the noise learned from the other "
        "half of the compared runs and the rest of the history: for a first A/A (a paired one, say) whose noise is "
        "measured nowhere else",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "crosscheck",
        help="the farm's cuBLAS and cuBLASLt (hot, cold) against torch.mm under Triton's do_bench_cudagraph / do_bench "
        "(a hot cuBLAS ratio beyond 3 %% timed again on torch's own operands); with --stages, kernels' %% of their "
        "baseline by both (needs torch, triton)",
    )
    given = p.add_mutually_exclusive_group()
    given.add_argument("--sizes", help="comma-separated cube edges or MxNxK shapes (default 256,1024,4096)")
    given.add_argument("--plan", help="take every shape of this plan file instead (cubes and MxNxK)")
    p.add_argument("--precisions", help="comma-separated, of fp32,tf32,fp16,bf16 (default all)")
    p.add_argument("--modes", help="comma-separated, of hot,cold (default both)")
    p.add_argument(
        "--stages",
        help="comma-separated kernel stages: each one's %% of its baseline by the farm's cell and by do_bench_cudagraph "
        "(stage and baseline alternated, in 4 pairs), hot",
    )
    p.add_argument(
        "--max-time-s",
        type=_above_zero,
        default=2.0,
        help="seconds of timed batches a farm cell gets at most (default 2)",
    )
    p.add_argument("--csv", help="also write the records to this CSV file, each as it is measured")
    p.add_argument(
        "--resume",
        action="store_true",
        help="go on from the records already in --csv's file: only what it lacks is measured, and added to it",
    )
    p.set_defaults(func=cmd_crosscheck)

    p = sub.add_parser("validate", help="check datasets against the schema; every problem reported, exit 1 if any")
    p.add_argument("paths", nargs="+", help="dataset paths or URIs")
    p.add_argument("--max-problems", type=_at_least(0), default=50, help="problems printed per dataset (default 50)")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("compact", help="rewrite each partition's small files as one (safe beside a running sweep)")
    p.add_argument("path", help="dataset path or URI")
    p.add_argument(
        "--telemetry-stride",
        type=_at_least(1),
        default=1,
        help="keep every n-th raw telemetry sample of each cell, its first always (default 1: all)",
    )
    p.add_argument(
        "--max-samples",
        type=_at_least(3),
        default=None,
        help="keep at most N raw batch times (samples_ms) a row, evenly spaced (default: all); summaries stay exact",
    )
    p.set_defaults(func=cmd_compact)

    p = sub.add_parser("published", help="the write-ups' published figures as CSV (datasets/published.csv)")
    p.set_defaults(func=cmd_published)

    p = sub.add_parser(
        "simulate",
        help="the sweep driver on a local Ray with N declared GPUs and stand-in cells (no GPU): "
        "rows/s, driver CPU and memory, files, busy fraction, tail",
    )
    p.add_argument("--gpus", type=_at_least(1), default=8, help="declared GPUs, one stand-in worker each (default 8)")
    p.add_argument(
        "--cells", type=_at_least(1), default=2000, help="cells to run, shard mode (default 2000; rounded up to even)"
    )
    p.add_argument(
        "--cell-ms",
        type=_at_least(0.0, float),
        default=10.0,
        help="milliseconds each cell sleeps (default 10; 0: instant)",
    )
    p.add_argument(
        "--flush-every", type=_above_zero, default=10.0, help="seconds between writes of buffered rows (default 10)"
    )
    p.add_argument("--output", help="keep the dataset here (default: a temporary directory, removed)")
    p.add_argument("--profile-driver", help="write a cProfile of the driver's sweep to this file (pstats)")
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser(
        "dashboard",
        help="the Streamlit dashboard over result datasets, on this machine only unless --host "
        "says otherwise (docs/dashboard.md)",
    )
    p.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="PATH",
        help="a dataset or a folder of datasets, repeatable (default: $GEMM_FARM_DATA, else the shipped "
        "datasets/ and the sweep's default output)",
    )
    p.add_argument(
        "--host",
        default="localhost",
        help="address to listen on (default localhost: this machine only). Another address opens the "
        "dashboard, which has no login, to whoever can reach it: put it behind an authenticating proxy",
    )
    p.add_argument("--port", type=_at_least(1), default=8501, help="port to listen on (default 8501)")
    p.set_defaults(func=cmd_dashboard)

    p = sub.add_parser(
        "schema", help="print the columns, types and meanings of the dataset's rows and runs tables (markdown)"
    )
    p.set_defaults(func=cmd_schema)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)
    if args.command == "sweep":  # farm/sweep.py's flags, parsed by its own parser
        from farm import sweep

        return sweep.main(rest, prog="python -m farm sweep")
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        return args.func(args)
    except (KeyError, ValueError) as exc:  # PlanError is a ValueError
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"error: {msg}", file=sys.stderr)
        return 2
