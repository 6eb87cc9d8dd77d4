"""Parquet round trips: rows written by the driver read back intact, partitioned, with the schema version."""

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from farm.cells import Cell
from farm.data.dataset import read_table, write_rows
from farm.data.rows import cell_row
from farm.data.schema import COLUMN_DOCS, ROW_SCHEMA, SCHEMA_VERSION, columns_markdown, rows_to_table
from kernels.registry import catalog

DEVICE = {
    "host": "node-a",
    "gpu_name": "NVIDIA H200",
    "gpu_model": "H200",
    "gpu_uuid": "GPU-1234",
    "gpu_index": 0,
    "compute_capability": "9.0",
    "arch": "sm_90",
    "sm_count": 132,
    "l2_bytes": 60 * 2**20,
    "memory_bytes": 141 * 2**30,
    "driver_version": "580.1",
    "cuda_runtime_version": "13.0",
    "nvrtc_version": "13.0",
    "cupy_version": "14.2.0",
}


def sample_row(stage="naive", model="H200", run="r1", repeat=0, samples=(1.0, 1.1, 0.9)):
    s = next(x for x in catalog() if x.name == stage)
    row = cell_row({**DEVICE, "gpu_model": model}, s, Cell(stage, 256, 256, 256, repeat), run, "ok")
    row.update(samples_ms=list(samples), median_ms=1.0, verified=True, tflops=0.03)
    return row


def test_round_trip_keeps_values_partitions_and_version(tmp_path):
    rows = [sample_row(), sample_row("tiled", model="NVIDIA-H100 80GB/HBM3", run="r2", repeat=1)]
    files = write_rows(rows, str(tmp_path))
    assert len(files) == 2 and all("/gpu_model=" in f and "/run_id=" in f for f in files)
    assert not list(tmp_path.rglob(".*.tmp"))
    table = read_table(str(tmp_path))
    assert table.num_rows == 2
    back = {r["stage"]: r for r in table.to_pylist()}
    assert back["tiled"]["gpu_model"] == "NVIDIA-H100 80GB/HBM3"  # percent-encoded on disk, decoded on read
    assert back["naive"]["samples_ms"] == [1.0, 1.1, 0.9]
    assert back["naive"]["timestamp"].tzinfo is not None
    meta = pq.read_schema(files[0]).metadata
    assert meta[b"gemm_farm_schema_version"] == SCHEMA_VERSION.encode()


def test_appending_never_overwrites(tmp_path):
    write_rows([sample_row()], str(tmp_path))
    write_rows([sample_row(repeat=1)], str(tmp_path))
    assert read_table(str(tmp_path)).num_rows == 2


def test_rows_must_match_schema():
    with pytest.raises(ValueError, match="not_a_column"):
        rows_to_table([{**sample_row(), "not_a_column": 1}])
    with pytest.raises(ValueError, match="run_id"):
        write_rows([{**sample_row(), "run_id": ""}], "/tmp/never-written")


def test_the_dataset_card_documents_the_schema_as_it_is():
    card = (Path(__file__).parent.parent / "datasets" / "README.md").read_text()
    assert columns_markdown() in card, "regenerate the column table of datasets/README.md with `python -m farm schema`"
    assert f"schema version {SCHEMA_VERSION}" in card and f"now\n`{SCHEMA_VERSION}`" in card
    assert set(COLUMN_DOCS) == set(ROW_SCHEMA.names)


def test_raw_telemetry_goes_to_its_own_table_and_joins(tmp_path):
    from farm.data.schema import TELEMETRY_KEY

    samples = [
        {
            "series": "kernel",
            "t_ms": 10.0 * i,
            "sm_clock_mhz": 1980,
            "mem_clock_mhz": 3201,
            "temp_c": 40,
            "power_w": 512.5,
            "reasons": 0,
        }
        for i in range(3)
    ]
    write_rows([{**sample_row(), TELEMETRY_KEY: samples}, sample_row("tiled")], str(tmp_path))
    rows = read_table(str(tmp_path))
    tele = read_table(str(tmp_path), "telemetry")
    assert rows.num_rows == 2 and tele.num_rows == 3
    assert "_telemetry" not in rows.column_names
    t = tele.to_pylist()[0]
    assert (t["gpu_model"], t["run_id"], t["gpu_uuid"], t["stage"], t["m"], t["repeat"]) == (
        "H200",
        "r1",
        "GPU-1234",
        "naive",
        256,
        0,
    )
    assert (tmp_path / "rows").is_dir() and (tmp_path / "telemetry").is_dir()


def test_absent_dataset_reads_empty(tmp_path):
    assert read_table(str(tmp_path / "nothing")).num_rows == 0


def _timed(stage: str, ms: float, base_ms: float, method: str, base_method: str | None, repeat: int = 0) -> dict:
    row = sample_row(stage, repeat=repeat)
    return {
        **row,
        "median_ms": ms,
        "min_ms": ms,
        "max_ms": ms,
        "q1_ms": ms,
        "q3_ms": ms,
        "samples_ms": [ms],
        "baseline_median_ms": base_ms,
        "pct_of_baseline": 100 * base_ms / ms,
        "timing_mode": "hot",
        "iqr_ms": 0.0,
        "launch_method": method,
        "baseline_launch_method": base_method,
    }


def test_schema_2_and_3_both_validate_and_mixed_launches_are_noted(tmp_path):
    from farm.data.schema import added_after
    from farm.data.validate import launch_notes, validate

    v3, v2 = tmp_path / "v3", tmp_path / "v2"
    write_rows(
        [
            _timed("naive", 2.0, 1.0, "cuda_graph", "cuda_graph"),
            _timed("cublas_fp32", 1.0, 1.0, "cuda_graph", "cuda_graph"),
        ],
        str(v3),
    )
    assert validate(str(v3)) == [] and launch_notes(str(v3)) == []
    # A schema-2 file: no version-3 columns, baseline launched directly (as CuPy's cuBLAS was).
    write_rows(
        [_timed("naive", 2.0, 1.0, "cuda_graph", None), _timed("cublas_fp32", 1.0, 1.0, "direct", None)], str(v2)
    )
    for path in v2.rglob("*.parquet"):
        table = pq.read_table(path)
        table = table.drop_columns([c for c in added_after("2") if c in table.column_names])
        pq.write_table(table.replace_schema_metadata({b"gemm_farm_schema_version": b"2"}), path)
    assert validate(str(v2)) == []
    assert read_table(str(v2)).column("baseline_launch_method").null_count == 2  # reads as null
    (note,) = launch_notes(str(v2))
    assert "1 of 2 ok rows" in note and "cuda_graph against direct cublas_fp32" in note
    # Version 3 promises the column on every ok row; an unknown version is refused.
    write_rows([_timed("tiled", 2.0, 1.0, "cuda_graph", None)], str(v3))
    assert any("ok row without baseline_launch_method" in p for p in validate(str(v3)))
    bad = next(v2.rglob("*.parquet"))
    pq.write_table(pq.read_table(bad).replace_schema_metadata({b"gemm_farm_schema_version": b"1"}), bad)
    assert any("schema version 1, expected one of 2, 3" in p for p in validate(str(v2)))


def test_report_flags_a_percentage_of_unlike_timings(tmp_path):
    from farm.analysis.report import FLAG, headline_table, ladder_table

    write_rows(
        [
            _timed("naive", 2.0, 1.0, "cuda_graph", "direct"),
            _timed("tiled", 1.5, 1.0, "cuda_graph", "cuda_graph"),
            _timed("cublas_fp32", 1.0, 1.0, "direct", "direct"),
        ],
        str(tmp_path),
    )
    ladder = ladder_table(str(tmp_path))
    naive = next(line for line in ladder.splitlines() if line.startswith("| naive "))
    tiled = next(line for line in ladder.splitlines() if line.startswith("| tiled "))
    assert FLAG in naive and FLAG not in tiled
    assert f"{FLAG} kernel timed as cuda_graph, baseline cublas_fp32 as direct" in ladder
    assert FLAG not in headline_table(str(tmp_path)).split("\n")[2]  # tiled leads, launched alike
