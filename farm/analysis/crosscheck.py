"""The farm's vendor baselines against an independent harness: torch.mm under Triton's benchmarkers.

For every precision class and shape (a cube edge, or M x N x K as the LLM plans have), the farm measures cublas_<p>
and cublaslt_<p> as it measures any cell (verified, interleaved batches, CUDA graphs), in hot and in cold mode (or
the modes asked for); PyTorch computes the same
product with the same output dtype (FP32; FP16/BF16 inputs through `out_dtype`), timed by
`triton.testing.do_bench_cudagraph` (hot: a graph of back-to-back calls) and `do_bench` (cold: it
clears the L2 with a 256 MB write before each call). A ratio near 1.0 says our harness times the
libraries as an outside tool does; where cuBLAS differs from torch.mm but cuBLASLt does not, the gap is
the algorithm PyTorch's cuBLASLt call picks, not the harness.
"""

from __future__ import annotations

import csv
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
)


def shape_label(m: int, n: int, k: int) -> str:
    """The CSV's `size`: the edge of a cube ("4096"), else "MxNxK" (as plans write sizes)."""
    return str(m) if m == n == k else f"{m}x{n}x{k}"


def _torch_call(precision: str, m: int, n: int, k: int):
    """torch.mm on fresh N(0,1) operands of the precision class, FP32 output, TF32 as the class says."""
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

    return run


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
    for precision, (m, n, k), left in todo:
        run = _torch_call(precision, m, n, k)
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
            yield record


def csv_writer(out: TextIO, header: bool = True) -> csv.DictWriter:
    """A CSV of records on `out`, its header written first (not where `out` goes on from an earlier CSV)."""
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    if header:
        writer.writeheader()
    return writer


def kept_records(path: str) -> list[dict]:
    """The records an earlier cross-check wrote to `path` (none if it is not there), as the CSV's strings; ValueError
    if its columns are not this version's."""
    if not Path(path).exists():
        return []
    with Path(path).open() as f:
        reader = csv.DictReader(f)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: its columns are not a cross-check's of this version; --resume cannot add to it")
        return list(reader)


def as_table(records: list[dict]) -> str:
    """A markdown table: times in microseconds, ratios to torch.mm."""

    def us(x):
        return f"{1000 * x:.1f}" if x else "-"

    def ratio(x):
        return f"{x:.3f}" if x else "-"

    lines = [
        "| precision | size | mode | farm cuBLAS us | farm cuBLASLt us | torch.mm us | cuBLAS / torch | cuBLASLt / torch |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['precision']} | {r['size']} | {r['mode']} | {us(r['cublas_ms'])} | {us(r['cublaslt_ms'])} | {us(r['torch_ms'])} | "
        f"{ratio(r['cublas_vs_torch'])} | {ratio(r['cublaslt_vs_torch'])} |"
        + ("" if r["verified"] else " not verified |")
        for r in records
    ]
    return "\n".join(lines)
