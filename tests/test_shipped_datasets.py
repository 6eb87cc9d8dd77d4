"""The shipped datasets pass validation and read through pyarrow, pandas and DuckDB; validation and compaction work."""

from pathlib import Path

import pytest

from farm.cells import Cell
from farm.data.compact import compact
from farm.data.dataset import read_table, write_rows
from farm.data.rows import cell_row
from farm.data.validate import validate
from kernels.registry import catalog, stage_named

ROOT = Path(__file__).parent.parent
DATASETS = sorted(p.parent for p in (ROOT / "datasets").glob("*/rows"))


ARCHIVE = sorted((ROOT / "datasets" / "archive").glob("*.tar.xz"))


def test_there_are_shipped_datasets():
    assert len(DATASETS) >= 2


def _schema_versions(path: Path) -> set[str]:
    import pyarrow.parquet as pq

    return {
        (pq.read_metadata(f).metadata or {}).get(b"gemm_farm_schema_version", b"1").decode()
        for f in (path / "rows").rglob("*.parquet")
    }


@pytest.mark.parametrize("path", DATASETS, ids=lambda p: p.name)
def test_shipped_datasets_compare_like_with_like(path):
    """Every dataset the dashboard reads by default is schema 3 or later: no % compares a graph-replayed kernel
    with a cuBLAS launched from Python (those datasets are in datasets/archive/)."""
    from farm.data.derived import launch_mismatch

    assert all(int(v) >= 3 for v in _schema_versions(path)), _schema_versions(path)
    assert (launch_mismatch(read_table(str(path)).to_pandas()) == "").all()


@pytest.mark.gpu
def test_shipped_rows_are_this_trees_code(capsys):
    """Each shipped row's code_sha256 is what this tree compiles to with the row's NVRTC (the GPU hosts' 13.0): the
    data is this code. 22 at f8a498c, which 13.0 would not compile, fails here."""
    import json

    from cupy.cuda import nvrtc

    from farm.cli import main

    version, shipped = "%d.%d" % nvrtc.getVersion(), {}
    for path in DATASETS:
        for r in read_table(str(path)).select(["stage", "nvrtc_version", "code_sha256"]).to_pylist():
            if r["code_sha256"] and r["nvrtc_version"] == version:
                shipped.setdefault(r["stage"], set()).add(r["code_sha256"])
    if not shipped:
        pytest.skip(f"no shipped row compiled with NVRTC {version}")
    assert main(["compile", "--arch", "sm_90", "--kernels", ",".join(sorted(shipped)), "--json", "--jobs", "8"]) == 0
    compiled = {r["stage"]: r["code_sha256"] for r in json.loads(capsys.readouterr().out)}
    assert {s: compiled.get(s) for s, h in shipped.items() if compiled.get(s) not in h} == {}


def test_archived_datasets_unpack_valid_and_described(tmp_path):
    """The schema-2 data ships in one .tar.xz (not read by default); it unpacks into one valid dataset, h200-ladders,
    described in the dataset card."""
    import tarfile

    card = (ROOT / "datasets" / "README.md").read_text()
    archive_section = card[card.index("## Archive") : card.index("## Reading")]
    assert ARCHIVE == [ROOT / "datasets" / "archive" / "schema2.tar.xz"]
    with tarfile.open(ARCHIVE[0]) as tar:
        tar.extractall(tmp_path, filter="data")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["h200-ladders"]
    for name in names:
        assert validate(str(tmp_path / name)) == [] and _schema_versions(tmp_path / name) == {"2"}
        assert f"### `{name}`" in archive_section


# Issue 8's reference datasets: plans/reference.toml measured on each, every cell ok, verified, at least three times,
# by the runs named (the walkd2 runs, plans/walkd.toml, and the tf32 runs, plans/walkd_tf32.toml, came after the
# catalog gained them), every % comparing two CUDA-graph timings (schema 3 on).
REFERENCE_RUNS = {
    "h100-reference": ("H100-80GB-HBM3", {"h100-ref3", "h100-walkd2", "h100-tf32"}),
    "h200-reference": ("H200", {"h200-ref3", "h200-walkd2", "h200-tf32"}),
}
# Stages added to the catalog after a dataset's reference runs (walk D from 07, walk D in TF32, FP8), which
# plans/reference.toml names: left out of the check below until their runs ship; it fails once a dataset holds one:
# no stale list. Each card's walkd2 run holds walk D's 07 to 12 and its tf32 run walk D in TF32's.
LATER_STAGES = {
    s.name
    for s in catalog()
    if s.family == "hopper_tf32" or s.dtype.startswith("fp8") or (s.family == "hopper_d" and s.position >= 7)
}
# walk D's 13 on came after the walkd2 runs; FP8's reference runs are a dataset of their own (fp8-reference)
NOT_YET = {
    n
    for n in LATER_STAGES
    if stage_named(n).dtype.startswith("fp8") or (stage_named(n).family == "hopper_d" and stage_named(n).position >= 13)
}
NOT_YET_IN_REFERENCE = {"h100-reference": NOT_YET, "h200-reference": NOT_YET}
CROSSCHECKED = ("h100-reference", "h200-reference")


def _plan_cells(plan_file: str) -> set[tuple]:
    """The plan's (stage, m, n, k) cells, repeats aside."""
    from farm.plan import load_plan

    return {(c.stage, c.m, c.n, c.k) for c in load_plan(ROOT / "plans" / plan_file).cells()}


@pytest.mark.parametrize("name", REFERENCE_RUNS)
def test_reference_dataset_holds_the_whole_plan_three_times(name):
    from collections import Counter

    model, runs = REFERENCE_RUNS[name]
    rows = read_table(str(ROOT / "datasets" / name)).to_pylist()
    assert {(r["gpu_model"], r["run_id"]) for r in rows} == {(model, run) for run in runs}
    # every row ok and verified, but walk D's cells at a K no TMA tensor map can describe (plans/walkd.toml's 3x5x7)
    ok = [r for r in rows if r["status"] == "ok"]
    assert all(r["verified"] for r in ok)
    assert all(
        r["stage"].startswith("d_") and r["k"] % 8 and "K" in r["status_reason"] for r in rows if r["status"] != "ok"
    )
    measured = Counter((r["stage"], r["m"], r["n"], r["k"]) for r in ok)
    later = NOT_YET_IN_REFERENCE[name]
    for cell in _plan_cells("reference.toml"):
        if cell[0] not in later:
            assert measured[cell] >= 3, (cell, measured[cell])
    assert not {r["stage"] for r in rows} & later, "shipped now: drop them from NOT_YET_IN_REFERENCE"
    assert {(r["launch_method"], r["baseline_launch_method"]) for r in ok} == {("cuda_graph", "cuda_graph")}


@pytest.mark.parametrize("name", CROSSCHECKED)
def test_reference_dataset_ships_its_crosscheck(name):
    """`farm crosscheck` ran beside the run: every precision, plan size and mode, both vendor libraries timed."""
    import csv

    from farm.analysis.crosscheck import COLUMNS, MODES, PRECISIONS

    with (ROOT / "datasets" / name / "crosscheck.csv").open() as f:
        records = list(csv.DictReader(f))
    assert records and tuple(records[0]) in (COLUMNS, COLUMNS[:-1])  # older: no follow-up
    sizes = {cell[1] for cell in _plan_cells("reference.toml")}
    assert {(r["precision"], int(r["size"]), r["mode"]) for r in records} == {
        (p, s, m) for p in PRECISIONS for s in sizes for m in MODES
    }
    assert all(
        r["verified"] == "True"
        and float(r["cublas_ms"]) > 0
        and float(r["cublaslt_ms"]) > 0
        and float(r["torch_ms"]) > 0
        for r in records
    )


# Issue 31's LLM target, `.ci/gpu-session.sh llm-targets` (plans/llm.toml's BF16 cells of these stages, cuBLAS
# interleaved and alone; the step now runs 16 too), `llm-later` (walk D 16-20 in h100-llmc; 17-21 since) and
# `llm-tail` (22 and 23 where their launch is not 21's), each with its torch.mm cross-check of those shapes.
LLM_TARGET_KERNELS = (
    "d_mma_overlap_bf16,d_multicast_bf16,d_narrow_tiles_bf16,d_split_k_bf16,d_tma_store_bf16,d_swap_plan_bf16,"
    "d_cluster_pair_bf16,d_dependent_launch_bf16,cublaslt_bf16"
)
LLM_LATER_KERNELS = "d_half_tiles_bf16,d_swap_dependent_bf16,d_lean_k_loop_bf16,d_tall_tiles_bf16,d_tile_order_bf16"
LLM_TAIL_KERNELS = "d_mixed_tiles_bf16,d_tail_halves_bf16"
LLM_TARGETS = {
    "h100-llm": {
        ("H100-80GB-HBM3", "h100-llmb"): LLM_TARGET_KERNELS,
        ("H100-80GB-HBM3", "h100-llmc"): "d_priced_plan_bf16," + LLM_LATER_KERNELS.replace(",d_tile_order_bf16", ""),
    },
    "h200-llm": {
        ("H200", "h200-llmt3"): LLM_TARGET_KERNELS,
        ("H200", "h200-llmc"): LLM_LATER_KERNELS,
        ("H200", "h200-llme"): LLM_TAIL_KERNELS,
    },
}
# Issue 31's cube targets, `.ci/gpu-session.sh cubes` (walk D 12, 22 and 23 at 1024^3-8192^3, three repeats; 12, 19
# and 20 in h100-cubese, as the step ran then; 22, 23 and 24 in h200-cubesg, CUBE_KERNELS) with the cross-check of both
# precisions' vendor baselines from the same call.
CUBE_KERNELS = (
    "d_tma_store_bf16,d_mixed_tiles_bf16,d_tail_halves_bf16,d_tma_store_fp16,d_mixed_tiles_fp16,d_tail_halves_fp16"
)
CUBE_RUNS = {
    ("H100-80GB-HBM3", "h100-cubese"): (
        "d_tma_store_bf16,d_lean_k_loop_bf16,d_tall_tiles_bf16,d_tma_store_fp16,d_lean_k_loop_fp16,d_tall_tiles_fp16"
    ),
    ("H200", "h200-cubesg"): (
        "d_mixed_tiles_bf16,d_tail_halves_bf16,d_evict_first_c_bf16,d_mixed_tiles_fp16,d_tail_halves_fp16,d_evict_first_c_fp16"
    ),
}
FP8_REFERENCE = {("H200", "h200-walkf3"), ("H100-80GB-HBM3", "h100-walkf3")}
# Walk F's stages after those runs (09, 09 in E5M2, 10), left out until a run holding them ships; none may be in them.
FP8_LATER = {"f_half_tiles_fp8", "f_half_tiles_fp8_e4m3_e5m2", "f_swap_dependent_fp8"}
# Issue 32's FP8 target at the LLM shapes, `.ci/gpu-session.sh fp8-targets`, in blocks at the cap (H100).
FP8_TARGET_KERNELS = (
    "f_mma_overlap_fp8,f_swap_plan_fp8,f_tile_plan_fp8,f_half_tiles_fp8,cublaslt_fp8_e4m3,torch_fp8_e4m3"
)


def _every_cell_ok(rows: list[dict], cells: set[tuple], times: int) -> None:
    from collections import Counter

    ok = [r for r in rows if r["status"] == "ok"]
    assert len(ok) == len(rows) and all(r["verified"] for r in ok)
    measured = Counter((r["stage"], r["m"], r["n"], r["k"]) for r in ok)
    assert set(measured) == cells and min(measured.values()) >= times
    assert {(r["launch_method"], r["baseline_launch_method"]) for r in ok} == {("cuda_graph", "cuda_graph")}


@pytest.mark.parametrize("name", LLM_TARGETS)
def test_llm_target_runs_hold_the_step_cells_and_their_crosscheck(name):
    from farm.plan import load_plan
    from kernels.hopper_d.host_plan import launch_is_not_21s

    step = (ROOT / ".ci" / "gpu-session.sh").read_text()
    assert LLM_TARGET_KERNELS in step and LLM_LATER_KERNELS in step and f"kernels={LLM_TAIL_KERNELS};" in step
    rows = read_table(str(ROOT / "datasets" / name)).to_pylist()
    assert {(r["gpu_model"], r["run_id"]) for r in rows} == set(LLM_TARGETS[name])
    plan = load_plan(ROOT / "plans" / "llm.toml").cells()
    for (_, run), kernels in LLM_TARGETS[name].items():
        mine = [r for r in rows if r["run_id"] == run]
        stages = {*kernels.split(","), "cublas_bf16"}
        cells = {(c.stage, c.m, c.n, c.k) for c in plan if c.stage in stages}
        assert len(cells) == 72 * len(stages)
        if kernels == LLM_TAIL_KERNELS:  # on the card's SMs: 16 shapes on an H200's 132
            cells = {c for c in cells if launch_is_not_21s(*c[1:], mine[0]["sm_count"])}
        _every_cell_ok(mine, cells, 1)
        records = _crosscheck(name, run)
        shapes = {(m, n, k) for _, m, n, k in cells}
        assert {_as_shape(r["size"]) for r in records} == shapes and len(records) == len(shapes)
        assert all(r["verified"] == "True" and r["precision"] == "bf16" and float(r["torch_ms"]) > 0 for r in records)


def _crosscheck(dataset: str, run: str) -> list[dict]:
    import csv

    with (ROOT / "datasets" / dataset / f"crosscheck-{run}.csv").open() as f:
        return list(csv.DictReader(f))


def _as_shape(size: str) -> tuple[int, ...]:
    return tuple(map(int, size.split("x"))) if "x" in size else (int(size),) * 3


def test_cube_targets_hold_the_step_cells_three_times_and_their_crosscheck():
    assert CUBE_KERNELS in (ROOT / ".ci" / "gpu-session.sh").read_text()
    rows = read_table(str(ROOT / "datasets" / "walkd-cubes")).to_pylist()
    assert {(r["gpu_model"], r["run_id"]) for r in rows} == set(CUBE_RUNS)
    for (_, run), kernels in CUBE_RUNS.items():
        stages = {*kernels.split(","), "cublas_bf16", "cublas_fp16"}
        cubes = {(s, e, e, e) for s in stages for e in (1024, 2048, 4096, 8192)}
        _every_cell_ok([r for r in rows if r["run_id"] == run], cubes, 3)
        records = _crosscheck("walkd-cubes", run)
        measured = {(r["precision"], _as_shape(r["size"]), r["mode"]) for r in records}
        assert measured == {(p, (e,) * 3, "hot") for p in ("bf16", "fp16") for e in (1024, 2048, 4096, 8192)}
        assert all(r["verified"] == "True" and float(r["torch_ms"]) > 0 for r in records)


def test_fp8_reference_holds_the_walk_three_times_on_each_card():
    rows = read_table(str(ROOT / "datasets" / "fp8-reference")).to_pylist()
    assert {(r["gpu_model"], r["run_id"]) for r in rows} == FP8_REFERENCE
    assert not FP8_LATER & {r["stage"] for r in rows}
    cells = {cell for cell in _plan_cells("walkf.toml") if cell[0] not in FP8_LATER}
    for model, run in FP8_REFERENCE:
        _every_cell_ok([r for r in rows if r["run_id"] == run], cells, 3)


def test_fp8_llm_target_holds_the_step_cells_and_its_independent_reference():
    import math

    from farm.plan import load_plan

    assert FP8_TARGET_KERNELS in (ROOT / ".ci" / "gpu-session.sh").read_text()
    rows = read_table(str(ROOT / "datasets" / "fp8-llm")).to_pylist()
    runs = {("H100-80GB-HBM3", "h100-llmf8c"), ("H200", "h200-llmf8c")}
    assert {(r["gpu_model"], r["run_id"]) for r in rows} == runs
    stages = set(FP8_TARGET_KERNELS.split(","))
    cells = {(c.stage, c.m, c.n, c.k) for c in load_plan(ROOT / "plans" / "llm_fp8.toml").cells() if c.stage in stages}
    assert len(cells) == 72 * 6
    shapes = {(m, n, k) for _, m, n, k in cells}
    for _, run in runs:
        own = [r for r in rows if r["run_id"] == run]
        _every_cell_ok(own, cells, 1)
        assert any("in blocks" in (r["stop_reason"] or "") for r in own)
        # torch._scaled_mm calls cuBLASLt: over the 72 shapes the two medians agree within 2 % (geometric mean)
        by = {(r["stage"], r["m"], r["n"], r["k"]): r["median_ms"] for r in own}
        ratios = [by[("cublaslt_fp8_e4m3", *s)] / by[("torch_fp8_e4m3", *s)] for s in shapes]
        assert len(ratios) == 72 and abs(sum(map(math.log, ratios)) / 72) < 0.02


DEVICE = {
    "host": "h",
    "gpu_name": "NVIDIA H200",
    "gpu_model": "H200",
    "gpu_uuid": "GPU-1",
    "gpu_index": 0,
    "compute_capability": "9.0",
    "arch": "sm_90",
    "sm_count": 132,
}


def _ok(stage="naive", repeat=0, **kw):
    s = next(x for x in catalog() if x.name == stage)
    row = cell_row(DEVICE, s, Cell(stage, 64, 64, 64, repeat), "r1", "ok")
    row.update(
        {
            "verified": True,
            "samples_ms": [1.0, 1.1],
            "median_ms": 1.05,
            "min_ms": 1.0,
            "max_ms": 1.1,
            "q1_ms": 1.0,
            "q3_ms": 1.1,
            "tflops": 0.5,
            "baseline_median_ms": 0.9,
            "pct_of_baseline": 85.0,
            "launch_method": "cuda_graph",
            "baseline_launch_method": "cuda_graph",
            **kw,
        }
    )
    return row


def test_validation_reports_each_problem(tmp_path):
    write_rows(
        [_ok(), _ok("tiled", verified=False), _ok("regblock", throttled_fraction=1.5), _ok(repeat=0)], str(tmp_path)
    )
    (tmp_path / "rows" / "stray.parquet").write_bytes(b"not parquet")
    problems = "\n".join(validate(str(tmp_path)))
    assert "ok row is not verified" in problems
    assert "throttled_fraction=1.5 outside [0, 1]" in problems
    assert "has 2 rows in one run" in problems
    assert "stray.parquet: partition directories" in problems
    assert validate(str(tmp_path / "absent"))[0].endswith("*.parquet)")


def test_compaction_keeps_each_partitions_schema_version(tmp_path):
    """Rows measured under schema 2 stay labelled 2 (validate and the dashboard flag them) when compacted."""
    import pyarrow.parquet as pq

    write_rows([_ok(), _ok("tiled")], str(tmp_path))
    [old] = (tmp_path / "rows").rglob("*.parquet")
    table = pq.read_table(old)
    pq.write_table(table.replace_schema_metadata({b"gemm_farm_schema_version": b"2"}), old)
    write_rows([_ok(repeat=1)], str(tmp_path))  # a schema-3 file beside it
    compact(str(tmp_path))
    [merged] = (tmp_path / "rows").rglob("*.parquet")
    assert pq.read_metadata(merged).metadata[b"gemm_farm_schema_version"] == b"2"
    assert read_table(str(tmp_path)).num_rows == 3


def test_compacted_files_drop_the_arrow_schema_and_read_back_the_same(tmp_path):
    """A shipped file carries no serialized Arrow schema (7.7 KB of a rows file), only the schema version, and no
    dictionary pages (smaller under zstd): Parquet's own types read back as the farm's, column for column, with and
    without the reader's schema."""
    import pyarrow.parquet as pq

    from farm.data.schema import ROW_SCHEMA

    write_rows([_ok(), _ok("tiled"), _ok(repeat=1)], str(tmp_path))
    before = read_table(str(tmp_path)).sort_by([("stage", "ascending"), ("repeat", "ascending")])
    compact(str(tmp_path))
    [shipped] = (tmp_path / "rows").rglob("*.parquet")
    assert pq.read_metadata(shipped).metadata == {
        b"gemm_farm_schema_version": ROW_SCHEMA.metadata[b"gemm_farm_schema_version"]
    }
    meta = pq.read_metadata(shipped).row_group(0)
    assert not any(meta.column(i).has_dictionary_page for i in range(meta.num_columns))
    assert read_table(str(tmp_path)).sort_by([("stage", "ascending"), ("repeat", "ascending")]).equals(before)
    alone = pq.read_table(shipped)  # no schema given: what validate reads
    assert all(alone.schema.field(f.name).type.equals(f.type) for f in ROW_SCHEMA if f.name in alone.column_names)
    assert validate(str(tmp_path)) == []


def _telemetry(count: int) -> list[dict]:
    """`count` raw telemetry samples of a kernel series, 1 ms apart."""
    return [
        {
            "series": "kernel",
            "t_ms": float(i),
            "sm_clock_mhz": 1980,
            "mem_clock_mhz": 3201,
            "temp_c": 40,
            "power_w": 500.0,
            "reasons": 0,
        }
        for i in range(count)
    ]


def test_compaction_keeps_every_row_and_sample(tmp_path):
    from farm.data.schema import TELEMETRY_KEY

    for repeat in range(3):
        write_rows([{**_ok(repeat=repeat), TELEMETRY_KEY: _telemetry(8)}], str(tmp_path))
    assert compact(str(tmp_path)) == {"rows": (3, 1), "telemetry": (3, 1), "profile": (0, 0), "runs": (0, 0)}
    assert read_table(str(tmp_path)).num_rows == 3 and read_table(str(tmp_path), "telemetry").num_rows == 24
    compact(str(tmp_path), telemetry_stride=4)
    assert read_table(str(tmp_path), "telemetry").num_rows == 6
    assert validate(str(tmp_path)) == []


def test_a_telemetry_stride_thins_each_cell_and_keeps_every_cells_first_sample(tmp_path):
    """The stride counts within a cell, not across the partition: a cell with fewer samples than the stride keeps its
    first, so thinning never leaves a measured cell without telemetry."""
    from farm.data.schema import TELEMETRY_KEY

    for repeat, count in enumerate([1, 3, 5, 1]):
        write_rows([{**_ok(repeat=repeat), TELEMETRY_KEY: _telemetry(count)}], str(tmp_path))
    compact(str(tmp_path), telemetry_stride=2)
    kept = read_table(str(tmp_path), "telemetry").to_pylist()
    assert sorted((r["repeat"], r["t_ms"]) for r in kept) == [
        (0, 0.0),
        (1, 0.0),
        (1, 2.0),
        (2, 0.0),
        (2, 2.0),
        (2, 4.0),
        (3, 0.0),
    ]


def test_compaction_can_keep_fewer_samples_without_touching_the_summaries(tmp_path):
    """--max-samples keeps an even subset of each row's batch times, first and last included; the row's median and
    `batches` (how many were measured) stay, and so does the standard error the verdicts use."""
    from farm.measure.stopping import relative_noise

    samples = [1.0 + 0.01 * ((7 * i) % 13) for i in range(40)]
    write_rows(
        [{**_ok(), "samples_ms": samples, "batches": 40}, {**_ok("tiled"), "samples_ms": samples[:5]}], str(tmp_path)
    )
    before = {r["stage"]: r for r in read_table(str(tmp_path)).to_pylist()}
    with pytest.raises(ValueError, match="at least 3"):
        compact(str(tmp_path), max_samples=2)
    compact(str(tmp_path), max_samples=16)
    after = {r["stage"]: r for r in read_table(str(tmp_path)).to_pylist()}
    thinned = after["naive"]["samples_ms"]
    assert len(thinned) == 16 and thinned[0] == samples[0] and thinned[-1] == samples[-1]
    assert set(thinned) <= set(samples) and after["naive"]["batches"] == 40
    assert after["tiled"]["samples_ms"] == samples[:5]  # fewer than the cap: whole
    assert {c: after["naive"][c] for c in ("median_ms", "q1_ms", "q3_ms", "cv")} == {
        c: before["naive"][c] for c in ("median_ms", "q1_ms", "q3_ms", "cv")
    }
    # the subset's spread over all 40 batches: within a fifth of the full samples' standard error, not sqrt(40/16) off
    assert relative_noise(thinned, 40) == pytest.approx(relative_noise(samples), rel=0.2)
    assert relative_noise(thinned) > 1.5 * relative_noise(thinned, 40)
    assert validate(str(tmp_path)) == []


def test_published_reference_table_is_current_and_cited():
    import csv

    from farm.data.published import published_csv

    path = ROOT / "datasets" / "published.csv"
    assert path.read_text() == published_csv(), "regenerate with: python -m farm published > datasets/published.csv"
    rows = list(csv.DictReader(path.open()))
    assert {r["walk"] for r in rows} >= {"A", "B"}
    assert all(r["kind"] == "published" and r["source"] and r["device"] for r in rows)


def test_alone_baseline_is_the_runs_own_baseline_rows_beside_the_in_cell_one():
    import pandas as pd

    from farm.data.derived import with_alone_baseline

    kernel = _ok("naive", baseline_median_ms=1.03)
    other_card = {**_ok("naive", repeat=1, baseline_median_ms=1.0), "gpu_uuid": "GPU-2"}  # no own baseline rows there
    own = [{**_ok(kernel["baseline"], repeat=r), "median_ms": ms} for r, ms in ((0, 1.0), (1, 1.02), (2, 0.9))]
    own[2]["status"] = "timeout"  # only ok rows count
    frame = pd.DataFrame([kernel, other_card, *own]).assign(run_id="r1", timing_mode="hot")
    df = with_alone_baseline(frame)
    assert df.loc[0, "alone_baseline_ms"] == pytest.approx(1.01)
    assert df.loc[0, "pct_of_alone_baseline"] == pytest.approx(100 * 1.01 / 1.05)
    assert df.loc[0, "partner_shift_pct"] == pytest.approx(100 * (1.03 / 1.01 - 1))
    assert df.loc[1:, "alone_baseline_ms"].isna().all()  # another card; the baseline's own rows have no partner
    from dashboard.data import enrich  # the dashboard's Data page shows the same columns

    shown = enrich(frame)
    assert shown.loc[0, "partner_shift_pct"] == pytest.approx(df.loc[0, "partner_shift_pct"])
    assert enrich(frame.iloc[:0])[["pct_of_alone_baseline", "partner_shift_pct"]].empty


def test_at_the_power_cap_the_in_cell_baseline_takes_its_partners_clock():
    """The shipped data's partner effect (docs/verdicts.md, "At the power cap"): at 8192^3, where every cell ran at the
    700 W cap, cuBLAS timed batch by batch beside walk D's last stages ran slower than timed alone (the reference
    runs of both cards), and in blocks of 1 s (the cube runs) it did not; beside walk A's and the WMMA ladder's slow kernels (which leave the
    chip under its cap) it ran faster."""
    from farm.data.derived import with_alone_baseline

    def shifts(dataset: str, run: str, stages: set[str]):
        df = with_alone_baseline(read_table(str(ROOT / "datasets" / dataset)).to_pandas())
        at = df[(df["run_id"] == run) & (df["m"] == 8192) & (df["n"] == 8192) & df["stage"].isin(stages)]
        return at["partner_shift_pct"].dropna()

    last = {"d_host_plan_bf16", "d_tma_store_bf16", "d_host_plan_fp16", "d_tma_store_fp16"}
    for dataset, run in (("h100-reference", "h100-walkd2"), ("h200-reference", "h200-walkd2")):
        s = shifts(dataset, run, last)
        assert len(s) == 12 and s.median() > 1.0 and s.max() > 3.0
    for (_, run), kernels in CUBE_RUNS.items():  # not slower: medians 0.6 (h100-cubese), -0.1 % (h200-cubesg)
        s = shifts("walkd-cubes", run, set(kernels.split(",")))
        assert len(s) == 18 and s.median() < 1.0 and s.min() < 0 < s.max()
    slow = {"h_wmma_naive_bf16", "h_wmma_naive_fp16", "h_simt_warptile_bf16", "h_simt_warptile_fp16"}
    for dataset, run in (("h100-reference", "h100-ref3"), ("h200-reference", "h200-ref3")):
        s = shifts(dataset, run, slow)
        assert len(s) == 12 and s.median() < -10 and (s < 0).all()
