"""The farm's vendor baselines against an independent harness: torch.mm under Triton's benchmarkers.

Per precision class and shape (a cube edge, or M x N x K), the farm measures cublas_<p> and cublaslt_<p> as any cell
(verified, CUDA graphs), hot and cold (or the modes asked for); torch.mm makes the same product (FP32 out; FP16/BF16
through `out_dtype`) under `triton.testing.do_bench_cudagraph` (hot) or `do_bench` (cold: a 256 MB write clears the
L2 before each call). A ratio near 1.0 says our harness times the libraries as an outside tool does. The two are
timed one after the other: at the power cap that alone moves a ratio by a few % (H100, 2026-11-28, timer_swap.py
at d3b6adc: torch.mm and the farm's cuBLAS launched one kernel at every cube, within 2.4 % of each other under one
timer; of two cells of one kernel the later ran up to 3.3 % slower; do_bench at 200 ms read ~3 % faster than at 1 s).

Where a hot cuBLAS / torch.mm ratio is beyond 3 %, the farm's cuBLAS call is timed again beside torch.mm on torch's
own A and B, alternated (cublas_shared_vs_torch): at the cap torch's operands alone move it (docs/measurement.md,
H200s: 2.60 or 2.91 ms with one kernel, by which B it read; 1.124 in a cross-check, 0.999 in its follow-up).

With stages named (stage_crosscheck), a kernel's % of its baseline is read by both harnesses in one call: the farm's
cell, and the kernel and the same baseline call under do_bench_cudagraph in alternated pairs, which cancels that.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from farm.cells import Cell
from farm.measure.cell_timer import MeasureOptions
from farm.measure.stopping import StoppingRule
from farm.measure.timing import TimingConfig

PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
LIBRARIES = ("cublas", "cublaslt")
MODES = ("hot", "cold")
COLUMNS = (
    "precision",
    "size",
    "mode",
    "cublas_ms",
    "cublaslt_ms",
    "torch_ms",
    "cublas_vs_torch",
    "cublaslt_vs_torch",
    "cublas_launch",
    "cublaslt_launch",
    "torch_timer",
    "verified",
    "cublas_shared_vs_torch",  # beyond FOLLOW_UP only; absent from CSVs made before 2026-11-29
)
FOLLOW_UP = 1.03  # a hot cuBLAS / torch.mm ratio beyond it (or its inverse) is timed again on shared operands


def shape_label(m: int, n: int, k: int) -> str:
    """The CSV's `size`: the edge of a cube ("4096"), else "MxNxK" (as plans write sizes)."""
    return str(m) if m == n == k else f"{m}x{n}x{k}"


def _torch_call(precision: str, m: int, n: int, k: int):
    """(torch.mm on fresh N(0,1) operands of the precision class, FP32 output, TF32 as the class says; (A, B, C))."""
    import torch

    dtype = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]
    a = torch.randn(m, k, device="cuda").to(dtype)
    b = torch.randn(k, n, device="cuda").to(dtype)
    c = torch.empty(m, n, device="cuda", dtype=torch.float32)
    if dtype == torch.float32:
        from farm.measure.extra_baselines import _set_tf32

        tf32 = precision == "tf32"

        def run() -> None:
            _set_tf32(torch, tf32)
            torch.mm(a, b, out=c)
    else:

        def run() -> None:
            torch.mm(a, b, out_dtype=torch.float32, out=c)

    return run, (a, b, c)


def followed_up(ratio: float | None) -> bool:
    return ratio is not None and not 1 / FOLLOW_UP <= ratio <= FOLLOW_UP


def shared_operands_ratio(measurer, bench, precision: str, torch_run, operands, pairs: int = 2) -> float | None:
    """The farm's cuBLAS call (as its cells launch it) and torch.mm on torch's A and B, each into its own C, under
    `bench` in alternated pairs: farm / torch time (geometric mean); None unless the farm's C matches torch's."""
    import cupy
    import torch

    def ours(t):  # the farm reads BF16 as uint16 bit patterns (CuPy has no bfloat16)
        return cupy.from_dlpack(t.view(torch.uint16) if t.dtype == torch.bfloat16 else t)

    a, b, c = operands
    torch_run()
    torch.cuda.synchronize()
    farm = measurer.library_against(
        f"cublas_{precision}", ours(a), ours(b), ours(c), a.shape[0], b.shape[1], a.shape[1]
    )
    if not farm["verified"]:
        return None
    return 100 / alternated_ratio(bench, farm["call"], torch_run, pairs)["do_bench_pct"]


def to_measure(
    shapes: list[tuple[int, int, int]],
    precisions: tuple[str, ...],
    modes: tuple[str, ...],
    done: frozenset = frozenset(),
) -> list[tuple[str, tuple[int, int, int], list[str]]]:
    """(precision, shape, the modes left) for each precision and shape with a mode not in `done` ((precision, size,
    mode) an earlier call recorded), in the order they are measured."""
    return [
        (precision, shape, left)
        for precision in precisions
        for shape in shapes
        if (left := [mode for mode in modes if (precision, shape_label(*shape), mode) not in done])
    ]


def crosscheck(
    shapes: list[tuple[int, int, int]],
    precisions: tuple[str, ...] = PRECISIONS,
    max_time_s: float = 2.0,
    modes: tuple[str, ...] = MODES,
    done: frozenset = frozenset(),
) -> Iterator[dict]:
    """One record per (precision, shape (m, n, k), mode) not in `done` (to_measure), each as soon as it is measured;
    the farm's side stops each cell after `max_time_s` of batches."""
    todo = to_measure(shapes, precisions, modes, done)
    if not todo:  # nothing left: no GPU, PyTorch or Triton needed
        return
    import triton.testing

    from farm.measure.gpu import GpuMeasurer

    ours = {
        mode: GpuMeasurer(
            options=MeasureOptions(timing=TimingConfig(mode=mode, stopping=StoppingRule(max_time_s=max_time_s)))
        )
        for mode in modes
    }
    bench = None
    for precision, (m, n, k), left in todo:
        run, operands = _torch_call(precision, m, n, k)
        theirs = {
            mode: triton.testing.do_bench_cudagraph(run, rep=200, return_mode="median")
            if mode == "hot"
            else triton.testing.do_bench(run, warmup=25, rep=200, return_mode="median")
            for mode in left
        }
        for mode in left:
            rows = {lib: ours[mode].measure(Cell(f"{lib}_{precision}", m, n, k), "crosscheck") for lib in LIBRARIES}
            record = {
                "precision": precision,
                "size": shape_label(m, n, k),
                "mode": mode,
                "torch_ms": theirs[mode],
                "torch_timer": "do_bench_cudagraph" if mode == "hot" else "do_bench",
                "verified": all(r.get("verified") for r in rows.values()),
            }
            for lib, row in rows.items():
                ms = row.get("median_ms") if row["status"] == "ok" else None
                record[f"{lib}_ms"] = ms
                record[f"{lib}_vs_torch"] = ms / theirs[mode] if ms else None
                record[f"{lib}_launch"] = row.get("launch_method") or f"{row['status']}: {row['status_reason']}"[:80]
            if mode == "hot" and followed_up(record["cublas_vs_torch"]):
                bench = bench or _graph_bench(200)
                record["cublas_shared_vs_torch"] = shared_operands_ratio(ours[mode], bench, precision, run, operands)
            yield record


STAGE_COLUMNS = (
    "stage",
    "size",
    "baseline",
    "farm_status",
    "farm_pct",
    "do_bench_pct",
    "do_bench_pct_low",
    "do_bench_pct_high",
    "stage_ms",
    "baseline_ms",
    "pairs",
    "timer",
    "verified",
)


def _graph_bench(rep_ms: int):
    """ms a call of a callable under do_bench_cudagraph (median), CuPy's current stream made torch's for the capture."""
    import cupy
    import torch
    import triton.testing

    streams = {}  # one CuPy view a torch stream (the capture's is not the warm-up's), not one a call

    def bench(fn) -> float:
        def on_torch_stream() -> None:
            ptr = torch.cuda.current_stream().cuda_stream
            if ptr not in streams:
                streams[ptr] = cupy.cuda.ExternalStream(ptr)
            with streams[ptr]:
                fn()

        return triton.testing.do_bench_cudagraph(on_torch_stream, rep=rep_ms, return_mode="median")

    return bench


def alternated_ratio(bench, stage, baseline, pairs: int) -> dict:
    """The stage against the baseline by `bench` in `pairs` pairs of calls, the stage first in even pairs (the later
    call runs warmer at the cap: over two pairs the order cancels): % of baseline (100 x the geometric mean of
    baseline / stage), its lowest and highest pair, each side's median ms."""
    stage_ms, baseline_ms = [], []
    for i in range(pairs):
        sides = [(stage, stage_ms), (baseline, baseline_ms)]
        for call, times in sides if i % 2 == 0 else sides[::-1]:
            times.append(bench(call))
    pct = [100 * b / s for s, b in zip(stage_ms, baseline_ms)]
    return {
        "do_bench_pct": math.exp(statistics.fmean(math.log(p) for p in pct)),
        "do_bench_pct_low": min(pct),
        "do_bench_pct_high": max(pct),
        "stage_ms": statistics.median(stage_ms),
        "baseline_ms": statistics.median(baseline_ms),
        "pairs": pairs,
    }


def stage_crosscheck(
    stages: list[str],
    shapes: list[tuple[int, int, int]],
    pairs: int = 4,
    max_time_s: float = 2.0,
    rep_ms: int = 200,
    done: frozenset = frozenset(),
    measurer=None,
    bench=None,
) -> Iterator[dict]:
    """A record per (stage, shape) not in `done` ((stage, size) recorded earlier), yielded as measured: the farm's hot
    cell (`farm_pct`, its % of baseline, null unless `ok`), then the stage and the same baseline call on fresh inputs,
    verified, under do_bench_cudagraph at `rep_ms`, alternated. `measurer` and `bench` (ms a call) are for tests."""
    todo = [(name, shape) for name in stages for shape in shapes if (name, shape_label(*shape)) not in done]
    if not todo:
        return
    if measurer is None:
        from farm.measure.gpu import GpuMeasurer

        measurer = GpuMeasurer(
            options=MeasureOptions(timing=TimingConfig(mode="hot", stopping=StoppingRule(max_time_s=max_time_s)))
        )
    bench = bench or _graph_bench(rep_ms)
    for name, (m, n, k) in todo:
        row = measurer.measure(Cell(name, m, n, k), "crosscheck")
        record = {
            "stage": name,
            "size": shape_label(m, n, k),
            "baseline": row.get("baseline"),
            "timer": "do_bench_cudagraph",
            "farm_status": row["status"],
            "farm_pct": row.get("pct_of_baseline") if row["status"] == "ok" else None,
        }
        if row["status"] in ("skipped", "error", "failed_verification"):  # nothing to time by the other harness
            yield {**record, "verified": False}
            continue
        calls = measurer.standalone(name, m, n, k)
        record["baseline"] = calls["baseline_name"]
        record["verified"] = calls["verified"] and row["status"] == "ok"
        if calls["verified"]:
            record |= alternated_ratio(bench, calls["stage"], calls["baseline"], pairs)
        yield record


def csv_writer(out: TextIO, header: bool = True, columns: tuple[str, ...] = COLUMNS) -> csv.DictWriter:
    """A CSV of records on `out`, its header written first (not where `out` goes on from an earlier CSV)."""
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    if header:
        writer.writeheader()
    return writer


def kept_records(path: str, columns: tuple[str, ...] = COLUMNS) -> list[dict]:
    """The records an earlier cross-check wrote to `path` (none if it is not there), as the CSV's strings; ValueError
    if its columns are not `columns`."""
    if not Path(path).exists():
        return []
    with Path(path).open() as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != columns:
            raise ValueError(f"{path}: its columns are not a cross-check's of this version; --resume cannot add to it")
        return list(reader)


def as_table(records: list[dict]) -> str:
    """A markdown table: times in microseconds, ratios to torch.mm."""

    def us(x):
        return f"{1000 * x:.1f}" if x else "-"

    def ratio(x):
        return f"{x:.3f}" if x else "-"

    lines = [
        "| precision | size | mode | farm cuBLAS us | farm cuBLASLt us | torch.mm us | cuBLAS / torch | cuBLASLt / torch "
        "| cuBLAS / torch, one A and B |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['precision']} | {r['size']} | {r['mode']} | {us(r['cublas_ms'])} | {us(r['cublaslt_ms'])} | {us(r['torch_ms'])} | "
        f"{ratio(r['cublas_vs_torch'])} | {ratio(r['cublaslt_vs_torch'])} | "
        f"{ratio(r.get('cublas_shared_vs_torch'))} |" + ("" if r["verified"] else " not verified |")
        for r in records
    ]
    return "\n".join(lines)


def as_stage_table(records: list[dict]) -> str:
    """A markdown table of stage_crosscheck's records: the farm's % of baseline beside do_bench_cudagraph's."""

    def pct(x):
        return f"{x:.1f}" if x is not None else "-"

    lines = [
        "| stage | size | baseline | farm % | do_bench % (lowest-highest pair) | stage ms | baseline ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in records:
        timed = (
            f"{pct(r['do_bench_pct'])} ({pct(r['do_bench_pct_low'])}-{pct(r['do_bench_pct_high'])}) | "
            f"{r['stage_ms']:.4f} | {r['baseline_ms']:.4f} |"
            if "stage_ms" in r
            else "- | - | - |"
        )
        unverified = "" if r["verified"] else f" not verified (farm cell {r['farm_status']}) |"
        lines.append(f"| {r['stage']} | {r['size']} | {r['baseline']} | {pct(r['farm_pct'])} | {timed}{unverified}")
    return "\n".join(lines)
