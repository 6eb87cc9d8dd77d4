"""The runs table: records from a sweep's tallies, Parquet round trip, `farm validate` and `farm report` on it."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pytest

from farm.analysis.report import runs_table
from farm.cells import Cell
from farm.cluster.fleet import GpuNode, Worker
from farm.cluster.progress import Progress
from farm.cluster.runs import Clock, run_records
from farm.data.dataset import RUNS, read_table, write_rows, write_table
from farm.data.row_batch import row_batches
from farm.data.rows import cell_row
from farm.data.schema import RUNS_SCHEMA, STATUSES, runs_columns_markdown
from farm.data.validate import validate
from kernels.registry import stage_named

DEVICE = {
    "host": "node-a",
    "gpu_name": "NVIDIA H200",
    "gpu_model": "H200",
    "gpu_uuid": "GPU-aaaa1111",
    "gpu_index": 0,
    "compute_capability": "9.0",
    "arch": "sm_90",
    "sm_count": 132,
    "driver_version": "580.1",
    "cuda_runtime_version": "13.0",
    "cupy_version": "14.2.0",
}


def _ok(cell: Cell, timed: float) -> dict:
    row = cell_row(DEVICE, stage_named(cell.stage), cell, "r1", "ok")
    ms = 1.0
    row.update(
        verified=True,
        samples_ms=[ms] * 3,
        median_ms=ms,
        min_ms=ms,
        max_ms=ms,
        q1_ms=ms,
        q3_ms=ms,
        tflops=1.0,
        baseline_median_ms=ms,
        pct_of_baseline=100.0,
        launch_method="cuda_graph",
        baseline_launch_method="cuda_graph",
        timed_seconds=timed,
    )
    return row


def _sweep(tmp_path: Path, interrupted: bool = False) -> tuple[list[dict], list[dict]]:
    """Rows and runs records of a made-up sweep on one GPU: two ok cells and a timeout, 2 s after a 5 s start-up."""
    worker = Worker(actor=None, node=GpuNode("node-a-id", "node-a", 1, "H200"), device=DEVICE)
    now = time.monotonic()
    clock = Clock(dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=7), now - 7, now - 2)
    progress = Progress(10.0, clock.started)
    progress.add_queue(
        "H200", [(("naive", 64, 64, 64), 1.0), (("tiled", 64, 64, 64), 1.0), (("cublas_fp32", 64, 64, 64), 1.0)], 1
    )
    progress.add_gpu(worker.key, worker.name, "H200")
    rows = [
        _ok(Cell("naive", 64, 64, 64), 0.25),
        _ok(Cell("tiled", 64, 64, 64), 0.25),
        cell_row(DEVICE, stage_named("cublas_fp32"), Cell("cublas_fp32", 64, 64, 64), "r1", "timeout", "no result"),
    ]
    for row in rows:
        [batch] = row_batches([row])
        progress.finished(worker.key, [Cell(row["stage"], 64, 64, 64)], [1.0], batch.rows, 0.5)
    return rows, run_records("r1", "shard", [worker], progress, clock, interrupted)


def test_runs_record_counts_cells_times_and_overhead(tmp_path):
    _, [run] = _sweep(tmp_path)
    assert set(run) == set(RUNS_SCHEMA.names)
    assert (run["cells_ok"], run["cells_timeout"], run["cells_error"], run["cells_resumed"]) == (2, 1, 0, 1)
    assert run["startup_seconds"] == pytest.approx(5, abs=0.01) and run["wall_seconds"] == pytest.approx(7, abs=0.1)
    assert 5 <= run["first_row_seconds"] <= run["wall_seconds"]
    assert run["timed_seconds"] == 0.5
    assert run["overhead_ratio"] == pytest.approx((run["wall_seconds"] - 5) / 0.5)
    assert run["cupy_version"] == "14.2.0" and run["ray_version"] and run["python_version"] and not run["interrupted"]


def test_runs_round_trip_validate_and_report(tmp_path):
    rows, runs = _sweep(tmp_path)
    write_rows(rows, str(tmp_path))
    write_table(runs, str(tmp_path), RUNS)
    [back] = read_table(str(tmp_path), RUNS).to_pylist()
    assert back == {**runs[0], "started_at": back["started_at"], "ended_at": back["ended_at"]}
    assert abs(back["started_at"] - runs[0]["started_at"]) < dt.timedelta(milliseconds=1)
    assert validate(str(tmp_path)) == []
    table = runs_table(str(tmp_path))
    assert "| r1 |" in table and "H200 [aaaa1111]" in table and f"{runs[0]['overhead_ratio']:.2f}x" in table


def test_compaction_keeps_each_part_of_a_resumed_run(tmp_path):
    from farm.data.compact import compact

    rows, [first] = _sweep(tmp_path)
    resumed = {
        **first,
        "started_at": first["started_at"] + dt.timedelta(minutes=5),
        "ended_at": first["ended_at"] + dt.timedelta(minutes=5),
        "cells_resumed": 3,
        **{f"cells_{s}": 0 for s in STATUSES},
    }  # the second command found every cell done
    write_rows(rows, str(tmp_path))
    write_table([resumed], str(tmp_path), RUNS)
    write_table([first], str(tmp_path), RUNS)
    assert compact(str(tmp_path))["runs"] == (2, 1)
    back = read_table(str(tmp_path), RUNS).to_pylist()
    assert [r["cells_resumed"] for r in back] == [1, 3], "one file, both parts, in the order they started"
    assert validate(str(tmp_path)) == []


def test_validate_flags_a_runs_record_that_does_not_add_up(tmp_path):
    rows, [run] = _sweep(tmp_path)
    write_rows(rows[:2], str(tmp_path))  # a row the runs record counts is missing
    write_table([{**run, "ended_at": run["started_at"] - dt.timedelta(seconds=1), "mode": "both"}], str(tmp_path), RUNS)
    problems = validate(str(tmp_path))
    assert any("ended_at is before started_at" in p for p in problems)
    assert any("mode 'both'" in p for p in problems)
    assert any("counts 3 rows but the rows table holds 2" in p for p in problems)


def test_the_dataset_card_documents_the_runs_table():
    card = (Path(__file__).parent.parent / "datasets" / "README.md").read_text()
    assert runs_columns_markdown() in card, (
        "regenerate the runs table of datasets/README.md with `python -m farm schema`"
    )
