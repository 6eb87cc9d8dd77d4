"""The dashboard on a generated dataset: every page renders through streamlit's AppTest, with its charts and
downloads; empty, missing and corrupt datasets give a clear message. CPU only."""

from __future__ import annotations

import datetime as dt
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("streamlit")
pytest.importorskip("altair")

from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboard import data, frames  # noqa: E402
from dashboard.views import (  # noqa: E402
    data as data_page,  # noqa: E402
    ladder,
    llm,
    overview,
    reproducibility,
    scaling,
    telemetry,
    tuning,
)
from farm.analysis.report import headline_table  # noqa: E402
from farm.cells import Cell  # noqa: E402
from farm.data.dataset import write_rows, write_table  # noqa: E402
from farm.data.llm_shapes import MODELS  # noqa: E402
from farm.data.rows import cell_row  # noqa: E402
from farm.data.schema import TELEMETRY_KEY  # noqa: E402
from kernels.registry import catalog  # noqa: E402
from kernels.tuning import tuning_stages  # noqa: E402

APP = str(Path(__file__).resolve().parent.parent / "dashboard" / "app.py")
PAGES = {  # page file -> (charts at least, download buttons at least)
    "overview": (2, 0),
    "ladder": (1, 0),
    "tuning": (0, 0),
    "scaling": (2, 0),
    "compare": (1, 1),
    "history": (1, 0),
    "peak": (2, 0),
    "llm": (0, 0),  # the generated dataset holds no LLM shape: the page says so (test_llm_page_*)
    "reproducibility": (4, 0),
    "telemetry": (2, 0),
    "data": (0, 8),
}
STAGES = {s.name: s for s in catalog()}
KERNELS = {"naive": 0.11, "tiled": 0.32, "regblock": 0.47, "bank_pad_vec": 0.63, "ldg_vec": 0.8}  # fraction of cuBLAS
SIZES = (512, 1024, 2048)


def device(model: str, name: str, uuid: str, host: str, cc: str, sms: int) -> dict:
    return {
        "host": host,
        "gpu_name": name,
        "gpu_model": model,
        "gpu_uuid": uuid,
        "gpu_index": 0,
        "compute_capability": cc,
        "arch": "sm_" + cc.replace(".", ""),
        "sm_count": sms,
        "l2_bytes": 50 * 2**20,
        "memory_bytes": 80 * 2**30,
        "driver_version": "580.95.05",
        "cuda_runtime_version": "13.0",
        "nvrtc_version": "13.0",
        "cupy_version": "14.0.0",
    }


GPUS = [  # (device, max SM clock MHz, cuBLAS FP32 TFLOP/s at the largest size)
    (
        device(
            "H100-80GB-HBM3", "NVIDIA H100 80GB HBM3", "GPU-1a2b3c4d-0000-0000-0000-000000000001", "node-a", "9.0", 132
        ),
        1980,
        51.0,
    ),
    (
        device(
            "H100-80GB-HBM3", "NVIDIA H100 80GB HBM3", "GPU-5e6f7a8b-0000-0000-0000-000000000002", "node-b", "9.0", 132
        ),
        1980,
        50.5,
    ),
    (
        device("RTX-4090", "NVIDIA GeForce RTX 4090", "GPU-9c0d1e2f-0000-0000-0000-000000000003", "node-c", "8.9", 128),
        2520,
        60.0,
    ),
]


def _timed(row: dict, median_ms: float, base_ms: float, rng: random.Random, clock: float, throttled: bool) -> dict:
    samples = [median_ms * (1 + rng.gauss(0, 0.004)) for _ in range(15)]
    if throttled:
        samples = [s * (1.25 if i % 3 == 0 else 1.0) for i, s in enumerate(samples)]
    q = statistics.quantiles(samples, n=4)
    med = statistics.median(samples)
    low_clock = int(clock * 0.6)
    tele = [
        {
            "series": "warmup",
            "t_ms": 10.0 * i,
            "sm_clock_mhz": int(clock * (0.7 + 0.05 * i)),
            "mem_clock_mhz": 2619,
            "temp_c": 45 + i,
            "power_w": 200.0 + 20 * i,
            "reasons": 0,
        }
        for i in range(6)
    ]
    for i in range(20):
        slow = throttled and 4 <= i < 12
        tele.append(
            {
                "series": "kernel" if i % 2 == 0 else "baseline",
                "t_ms": 60.0 + 10 * i,
                "sm_clock_mhz": low_clock if slow else int(clock),
                "mem_clock_mhz": 2619,
                "temp_c": 60 + i % 3,
                "power_w": 690.0 if slow else 520.0 + rng.random() * 30,
                "reasons": 0x4 if slow else 0,
            }
        )
    frac = 8 / 20 if throttled else 0.0
    row.update(
        verified=True,
        verify_reference="cublas_fp32 output for the same inputs",
        max_abs_error=1e-4,
        max_scaled_error=0.2,
        mismatches=0,
        atol=1e-3,
        rtol=1e-3,
        timing_mode="hot",
        launch_method="cuda_graph",
        warmup_launches=20,
        warmup_reason="clock_settled",
        launches_per_batch=10,
        batches=len(samples),
        launches_timed=10 * len(samples),
        timed_seconds=2 * sum(samples) * 10 / 1e3,
        stop_reason="converged",
        samples_ms=samples,
        median_ms=med,
        min_ms=min(samples),
        max_ms=max(samples),
        q1_ms=q[0],
        q3_ms=q[2],
        iqr_ms=q[2] - q[0],
        cv=statistics.pstdev(samples) / statistics.fmean(samples),
        tflops=row["flops"] / med / 1e9,
        baseline_median_ms=base_ms,
        pct_of_baseline=100 * base_ms / med,
        telemetry=True,
        telemetry_samples=20,
        sm_clock_min_mhz=float(low_clock if throttled else clock),
        sm_clock_median_mhz=float(clock),
        sm_clock_max_mhz=float(clock),
        max_sm_clock_mhz=float(clock),
        mem_clock_median_mhz=2619.0,
        power_mean_w=540.0,
        temp_max_c=62.0,
        energy_per_launch_mj=540.0 * med,
        energy_timed_j=1.0,
        clock_event_reasons=0x4 if throttled else 0,
        clock_event_names=["sw_power_cap"] if throttled else [],
        throttle_idle=False,
        throttle_power=throttled,
        throttle_thermal=False,
        throttle_hw_slowdown=False,
        low_clock_fraction=frac,
        throttled_fraction=frac,
        throttle_policy="flag",
        remeasures=0,
        **{TELEMETRY_KEY: tele},
    )
    return row


def make_rows(run: str, repeats: int, start: dt.datetime, seed: int, gpus=GPUS) -> list[dict]:
    """A sweep's rows: every GPU x (cuBLAS FP32 + five SIMT stages) x SIZES x repeats; one throttled cell,
    one failed verification and one skipped cell (on the first GPU, repeat 0)."""
    rng = random.Random(seed)
    rows, t = [], start
    for dev, clock, peak in gpus:
        for repeat in range(repeats):
            for size in SIZES:
                base_ms = 2 * size**3 / (peak * (0.6 + 0.4 * size / SIZES[-1]) * 1e9)
                for name in ("cublas_fp32", *KERNELS):
                    stage = STAGES[name]
                    row = cell_row(dev, stage, Cell(name, size, size, size, repeat), run, "ok")
                    t += dt.timedelta(milliseconds=400)
                    row["timestamp"] = t
                    first = dev is GPUS[0][0] and repeat == 0
                    if first and name == "tiled" and size == 1024:
                        row.update(
                            status="failed_verification",
                            verified=False,
                            mismatches=12,
                            max_scaled_error=3.5,
                            status_reason="12 of 1048576 elements outside tolerance (max scaled error 3.5); not timed",
                        )
                    elif first and name == "ldg_vec" and size == 512:
                        row.update(status="skipped", status_reason="N=512 is not supported here (test)")
                    else:
                        ms = base_ms / (1.0 if name == "cublas_fp32" else KERNELS[name])
                        rows.append(
                            _timed(
                                row, ms, base_ms, rng, clock, throttled=first and name == "regblock" and size == 2048
                            )
                        )
                        continue
                    rows.append(row)
    return rows


@pytest.fixture(scope="module")
def farm_dataset(tmp_path_factory) -> Path:
    """Two runs (r1: three repeats an hour ago; r2: one repeat, written just now, still in progress)."""
    root = tmp_path_factory.mktemp("farm") / "demo"
    now = dt.datetime.now(dt.timezone.utc)
    write_rows(make_rows("r1", 3, now - dt.timedelta(hours=1), seed=1), str(root))
    plan_cells = len(SIZES) * (1 + len(KERNELS))  # one repeat of every stage and size, per GPU (replicate)
    write_rows(
        [
            {**r, "plan_cells": plan_cells}
            for r in make_rows("r2", 1, now - dt.timedelta(seconds=50), seed=2, gpus=GPUS[:2])[:30]
        ],
        str(root),
    )
    started = now - dt.timedelta(hours=1, seconds=10)
    write_table(
        [
            {
                "run_id": "r1",
                "gpu_model": d["gpu_model"],
                "gpu_uuid": d["gpu_uuid"],
                "mode": "replicate",
                "started_at": started,
                "ended_at": started + dt.timedelta(seconds=100),
                "interrupted": False,
                "startup_seconds": 10.0,
                "first_row_seconds": 12.0,
                "wall_seconds": 100.0,
                "cells_ok": 5,
                "timed_seconds": 30.0,
                "overhead_ratio": 3.0,
            }
            for d, _, _ in GPUS
        ],
        str(root),
        "runs",
    )
    return root


@pytest.fixture(scope="module")
def archived(tmp_path_factory) -> Path:
    """The schema-2 datasets of datasets/archive/, unpacked: a folder holding h200-ladders"""
    import tarfile

    root = tmp_path_factory.mktemp("archive")
    for archive in (Path(APP).parent.parent / "datasets" / "archive").glob("*.tar.xz"):
        with tarfile.open(archive) as tar:
            tar.extractall(root, filter="data")
    return root


def app(monkeypatch, *paths: str) -> AppTest:
    monkeypatch.setenv(data.ENV, ":".join(paths))
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    return at


def vega_specs(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def chart_frames(at: AppTest) -> list[pd.DataFrame]:
    """Every chart's data on the page (Streamlit sends a chart's data beside its spec)."""
    return [
        pa.ipc.open_stream(d.data.data).read_all().to_pandas()
        for c in at.get("vega_lite_chart")
        for d in c.proto.datasets
    ]


def chart_values(at: AppTest) -> str:
    """Every value of every chart's data on the page, as text."""
    return "\n".join(f.astype(str).to_csv() for f in chart_frames(at))


def texts(at: AppTest) -> str:
    parts = [x.value for x in (*at.info, *at.warning, *at.error, *at.success, *at.caption, *at.markdown)]
    parts += [x.label for x in at.expander] + [c.value for c in at.code]
    return "\n".join(str(p) for p in parts)


def _encodings(spec):
    if isinstance(spec, dict):
        if isinstance(spec.get("encoding"), dict):
            yield spec["encoding"]
        for v in spec.values():
            yield from _encodings(v)
    elif isinstance(spec, list):
        for v in spec:
            yield from _encodings(v)


# ---------------------------------------------------------------- the app


def test_every_page_renders_with_its_charts_and_downloads(farm_dataset, monkeypatch):
    at = app(monkeypatch, str(farm_dataset))
    assert not at.exception
    for page, (n_charts, n_downloads) in PAGES.items():
        at.switch_page(f"views/{page}.py").run()
        assert not at.exception, (page, [e.message for e in at.exception])
        assert len(at.get("vega_lite_chart")) >= n_charts, page
        assert len(at.get("download_button")) >= n_downloads, page
        specs = json.dumps(vega_specs(at))
        if page == "overview":
            [bar] = at.get("progress")  # the run written just now is a sweep in progress; its total is the plan's
            assert bar.proto.text.startswith(f"30 of {2 * len(SIZES) * (1 + len(KERNELS))} cells of the plan")
            [cost] = [f.value for f in at.dataframe if "overhead" in f.value.columns]
            assert cost[["run_id", "gpus", "cells"]].values.tolist() == [["r1", 3, 15]]
            assert cost["overhead"].iloc[0] == pytest.approx(3.0)
        if page == "ladder":
            assert "published (RTX 3050 Laptop)" in specs and "H100-80GB-HBM3" in specs
        if page == "scaling":
            assert "cuBLAS (reference)" in specs
        if page == "peak":
            assert "arithmetic intensity" in specs and "pct_of_peak" in specs and "H100-80GB-HBM3" in specs
        if page == "reproducibility":
            frame = at.dataframe[0].value
            assert frame["issues"].iloc[0] == "unverified", "untrustworthy cells first"
            assert frame["issues"].str.contains("throttled").any() and frame["issues"].iloc[-1] == "ok"
        if page == "telemetry":
            assert '"rect"' in specs, "throttled windows are drawn"
        for spec in vega_specs(at):  # units on every quantitative / temporal axis, tooltips with run ids
            for enc in _encodings(spec):
                for ch in ("x", "y"):
                    e = enc.get(ch)
                    axis = e.get("axis", {}) if isinstance(e, dict) else None
                    if (
                        isinstance(e, dict)
                        and e.get("type") in ("quantitative", "temporal")
                        and axis is not None
                        and axis.get("labels", True)
                        and "field" in e
                        and e["field"] != "v"
                    ):
                        assert e.get("title"), (page, ch, e)


def test_charts_carry_run_ids_and_exact_values(farm_dataset):
    L = data.load_uncached([str(farm_dataset)])
    sc = scaling.scaling(frames.timed(L.rows))
    spec = scaling.scaling_chart(sc).to_dict()
    tips = [t["title"] for enc in _encodings(spec) for t in enc.get("tooltip", []) if isinstance(t, dict)]
    assert "run ids" in tips and "TFLOP/s (median)" in tips
    lad = ladder.ladder(L.rows, ladder.published_figures(), "simt_fp32", "2048³", ladder.stage_info())
    assert {"measured", "published"} <= set(lad["kind"])
    row = lad[(lad["source"] == "RTX-4090") & (lad["stage"] == "regblock")].iloc[0]
    assert row["gain"] == pytest.approx(0.47 / 0.32, rel=0.03)  # speed-up over tiled, the previous stage
    assert ladder.ladder_chart(lad, "2048³").to_dict()


def test_empty_and_missing_datasets_say_so(tmp_path, monkeypatch):
    (tmp_path / "empty").mkdir()
    at = app(monkeypatch, str(tmp_path / "empty"), str(tmp_path / "nowhere"))
    for page in PAGES:
        at.switch_page(f"views/{page}.py").run()
        assert not at.exception, page
        msg = texts(at)
        assert "No result rows found" in msg and "nowhere" in msg, page


def test_corrupt_file_is_named_and_skipped(farm_dataset, tmp_path, monkeypatch):
    root = tmp_path / "ds"
    write_rows(make_rows("r1", 1, dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc), seed=3, gpus=GPUS[2:]), str(root))
    bad = root / "rows" / "gpu_model=RTX-4090" / "run_id=r1" / "part-garbage.parquet"
    bad.write_bytes(b"this is not parquet" * 10)
    at = app(monkeypatch, str(root))
    for page in ("overview", "ladder"):
        at.switch_page(f"views/{page}.py").run()
        assert not at.exception
        assert "unreadable" in texts(at) and "part-garbage.parquet" in texts(at)
        assert at.get("vega_lite_chart"), "the readable rows are still shown"


# ---------------------------------------------------------------- loading


def test_sources_from_flag_env_and_defaults(tmp_path, monkeypatch):
    assert data.data_args(["--data", "a", "--data", f"b{__import__('os').pathsep}c", "--other"]) == ["a", "b", "c"]
    assert data.requested_paths(["--data", "x"], {data.ENV: "y"}) == (["x"], "--data")
    assert data.requested_paths([], {data.ENV: "y"})[0] == ["y"]
    paths, _ = data.requested_paths([], {})
    assert paths[0].endswith("datasets") and len(paths) == 2
    for name in ("h100", "h200"):  # a folder of datasets expands into them
        write_rows(
            make_rows("r", 1, dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc), seed=4, gpus=GPUS[:1])[:3],
            str(tmp_path / "sets" / name),
        )
    assert [s.name for s in data.discover([str(tmp_path / "sets")])] == ["h100", "h200"]


def test_older_schema_versions_get_nulls(tmp_path):
    old = tmp_path / "old" / "gpu_model=H200" / "run_id=v1"  # schema 1: rows directly under gpu_model=
    old.mkdir(parents=True)
    table = pa.table(
        {
            "stage": ["naive"],
            "m": pa.array([256], pa.int32()),
            "n": pa.array([256], pa.int32()),
            "k": pa.array([256], pa.int32()),
            "repeat": pa.array([0], pa.int32()),
            "status": ["ok"],
            "median_ms": [1.0],
            "family": ["simt_fp32"],
            "flops": pa.array([2 * 256**3], pa.int64()),
        }
    )
    pq.write_table(table.replace_schema_metadata({b"gemm_farm_schema_version": b"1"}), old / "part-0.parquet")
    L = data.load_uncached([str(tmp_path / "old")])
    assert not L.problems and len(L.rows) == 1
    r = L.rows.iloc[0]
    assert (r["gpu_model"], r["run_id"], r["schema_version"], r["dataset"]) == ("H200", "v1", "1", "old")
    assert pd.isna(r["throttled_fraction"]) and pd.isna(r["tflops"])


def test_new_files_show_up_without_rereading_old_ones(tmp_path):
    root = str(tmp_path / "live")
    start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    rows = make_rows("r", 1, start, seed=5, gpus=GPUS[:1])
    write_rows(rows[:10], root)
    first = data.load([root])
    write_rows(rows[10:], root)
    data.listing.clear()  # what the listing's few-second ttl does by itself
    second = data.load([root])
    assert len(first.rows) == 10 and len(second.rows) == len(rows) > 10


# ---------------------------------------------------------------- what the pages compute


def test_timeline_lays_cells_end_to_end_and_flags_throttling(farm_dataset):
    L = data.load_uncached([str(farm_dataset)])
    rows = L.rows[(L.rows["run_id"] == "r1") & (L.rows["gpu_uuid"] == GPUS[0][0]["gpu_uuid"])]
    tl = telemetry.timeline(frames.filter_telemetry(L.telemetry, rows), rows)
    assert tl["time"].is_monotonic_increasing
    windows = telemetry.throttle_windows(tl)
    assert (
        len(windows) == 1
        and "sw_power_cap" in windows["reasons"].iloc[0]
        and "regblock 2048³" in windows["stages"].iloc[0]
    )


def test_untrustworthy_cells_come_first(farm_dataset):
    L = data.load_uncached([str(farm_dataset)])
    cells = reproducibility.cell_spread(L.rows, cv_limit=0.02)
    assert list(cells["severity"]) == sorted(cells["severity"], reverse=True)
    assert cells["issues"].iloc[0].startswith("unverified") and cells["issues"].str.contains("throttled").any()
    aa = reproducibility.aa(L.rows, "r1", 0.01)
    assert len(aa) and set(aa["verdict"]) <= {"SAME", "FASTER", "SLOWER", "UNCLEAR"}


def test_sweep_in_progress_estimates_progress(farm_dataset):
    L = data.load_uncached([str(farm_dataset)])
    live = overview.sweeps_in_progress(L.rows, dt.datetime.now(dt.timezone.utc))
    assert list(live["run_id"]) == ["r2"] and 0 < live["progress"].iloc[0] < 1


def test_exports_round_trip(farm_dataset):
    L = data.load_uncached([str(farm_dataset)])
    table = data_page.export_table(L.rows, data.ROW_SCHEMA)
    back = pq.read_table(pa.BufferReader(data_page.to_parquet_bytes(table)))
    assert back.num_rows == len(L.rows) and "samples_ms" in back.column_names and "dataset" in back.column_names
    csv = data_page.to_csv_bytes(data_page.export_table(L.telemetry, data.TELEMETRY_SCHEMA)).decode()
    assert csv.splitlines()[0].startswith("run_id,gpu_model") and len(csv.splitlines()) == len(L.telemetry) + 1


def test_ladder_shows_the_counters_each_step_moved(monkeypatch, archived):
    """On H200 data: walk A's rows (the shipped h200-reference) beside its profile (the archived ladders dataset,
    whose own schema-2 rows stay hidden behind the sidebar's switch)."""
    at = app(monkeypatch, str(SHIPPED / "h200-reference"), str(archived / "h200-ladders"))
    at.switch_page("views/ladder.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert "rows hidden" in texts(at) and at.get("vega_lite_chart")
    assert "Counters that moved" in [h.value for h in at.subheader]
    table = at.dataframe[-1].value
    step = table[(table["from"] == "bank_pad_vec") & (table["to"] == "gmem_vec")].iloc[0]
    assert "global-store bytes used per 32-byte sector 7.99 -> 32" in step["counters that moved most"]
    assert step["step gain (measured)"] > 0


def test_ladder_shows_walk_d_with_its_counters(monkeypatch):
    """On the shipped H100 reference: walk D's stages in ladder order with the counters its BF16 steps moved."""
    shipped = Path(__file__).resolve().parent.parent / "datasets"
    at = app(monkeypatch, str(shipped / "h100-reference"))
    at.switch_page("views/ladder.py").run()
    at.selectbox(key="ladder_family").select("hopper_d").run()
    if at.selectbox(key="ladder_size").value != "4096³":
        assert "It was profiled at 4096³" in texts(at)
        at.selectbox(key="ladder_size").select("4096³").run()
    assert not at.exception, [e.message for e in at.exception]
    table = at.dataframe[-1].value
    step = table[(table["from"] == "d_tma_bf16") & (table["to"] == "d_warp_specialized_bf16")].iloc[0]
    assert "tensor pipe" in step["counters that moved most"] and step["step gain (measured)"] > 0


# ---------------------------------------------------------------- tuning

SHIPPED = Path(__file__).resolve().parent.parent / "datasets"


def tune_row(
    stage: str, ms: float, run: str = "t", repeat: int = 0, status: str = "ok", size: int = 1024, **kw
) -> dict:
    """A result row as the dashboard holds it (enriched columns set by hand): q1/q3 at ±0.2 %."""
    flops = 2 * size**3
    row = {
        "dataset": "d",
        "run_id": run,
        "gpu_model": "H200",
        "gpu_uuid": "GPU-1",
        "stage": stage,
        "repeat": repeat,
        "stage_group": "tuning" if "_tune_" in stage else "ladder",
        "family": "simt_fp32_c",
        "dtype": "fp32",
        "m": size,
        "n": size,
        "k": size,
        "size": float(size),
        "size_label": f"{size}³",
        "flops": flops,
        "status": status,
        "verified": status == "ok",
        "median_ms": ms if status == "ok" else None,
        "q1_ms": ms * 0.998,
        "q3_ms": ms * 1.002,
        "cv": 0.001,
        "pct_of_baseline": 100 * 0.5 / ms,
        "baseline_median_ms": 0.5,
        "registers": 128,
        "local_bytes": 0,
        "threads_per_block": 256,
        "dynamic_smem_bytes": 0,
    }
    row.update(kw)
    return row


def test_tuning_best_config_speedup_and_runner_up():
    k = "c_warptile"
    rows = pd.DataFrame(
        [
            tune_row(k, 2.0),
            tune_row(k, 9.0, run="older"),  # the ladder stage: its own run's row is the reference
            tune_row(f"{k}_tune_128x128x16_64x64_s1", 2.02),  # the ladder configuration again, as a tuning row
            tune_row(f"{k}_tune_128x256x8_64x64_s2", 1.58),
            tune_row(f"{k}_tune_128x256x8_64x64_s2", 1.62, repeat=1),
            tune_row(f"{k}_tune_128x256x8_64x64_s2", 1.60, repeat=2),  # median over repeats: 1.60
            tune_row(f"{k}_tune_256x128x8_64x64_s2", 1.70),
            tune_row(f"{k}_tune_64x64x8_32x64_s1", 1.0, status="failed_verification"),  # fastest, wrong: never counts
            tune_row(f"{k}_tune_64x128x8_32x64_s2", 1.1, verified=False),  # ok but unverified: never counts
            tune_row("cublas_fp32", 0.5, stage_group="baseline", family="baseline"),
        ]
    )
    assert tuning.tune_stage(f"{k}_tune_128x256x8_64x64_s2") == (k, "128x256x8_64x64_s2")
    assert tuning.tune_stage(k) is None
    cells = tuning.tuning_cells(rows, {k: "128x128x16_64x64_s1"})
    s = tuning.tuning_summary(cells, rows)
    assert len(s) == 1
    r = s.iloc[0]
    assert (r["best_config"], r["runner_up"]) == ("128x256x8_64x64_s2", "256x128x8_64x64_s2")
    assert r["best_ms"] == pytest.approx(1.60) and r["ladder_ms"] == pytest.approx(2.0) and r["ladder_same_run"]
    assert r["bought"] == pytest.approx(1.25)
    assert r["gap_pct"] == pytest.approx(100 * (1.70 / 1.60 - 1))
    assert r["ladder_aa_pct"] == pytest.approx(1.0) and r["ladder_rank"] == "3 of 3"
    assert (r["configs"], r["failed"], r["best_rows"]) == (3, 2, 3)
    assert (r["best_ms_lo"], r["best_ms_hi"]) == (pytest.approx(1.58), pytest.approx(1.62))  # min-max over repeats
    assert r["best_tflops"] == pytest.approx(2 * 1024**3 / 1.60 / 1e9) and r["winner"] == "clear"
    lines = tuning.tuning_lines(cells)
    assert set(lines["highlight"]) == {
        "ladder stage (128x128x16_64x64_s1)",
        "128x256x8_64x64_s2: best at 1024³",
        "128x128x16_64x64_s1: ladder configuration, as a tuning row",
        "other configurations",
    }
    assert tuning.tuning_chart(lines).to_dict() and tuning.tuning_rank_chart(lines, "1024³", "pct").to_dict()


def test_tuning_winner_within_noise_and_ladder_from_other_runs():
    k = "c_warptile"
    rows = pd.DataFrame(
        [
            tune_row(k, 2.0, run="ladders"),  # no ladder row in the tuning run: another run's is used, and said so
            tune_row(f"{k}_tune_128x128x16_64x64_s1", 2.1),  # the same kernel 5 % slower in another cell
            tune_row(f"{k}_tune_128x256x8_64x64_s2", 1.60),
            tune_row(f"{k}_tune_256x128x8_64x64_s2", 1.64),  # 2.5 % apart
        ]
    )
    r = tuning.tuning_summary(tuning.tuning_cells(rows, {k: "128x128x16_64x64_s1"}), rows).iloc[0]
    assert r["winner"] == "within noise" and not r["ladder_same_run"] and r["bought"] == pytest.approx(1.25)
    assert tuning.tuning_summary(tuning.tuning_cells(rows.iloc[1:]), rows.iloc[1:])["ladder_ms"].isna().all()
    assert tuning.tuning_cells(rows[rows["stage"] == k]).empty and tuning.tuning_summary(pd.DataFrame()).empty


# A tuning run's stand-in: (kernel, configuration) -> time against the kernel's ladder stage at 1024³ and 4096³
# (None: failed verification, untimed); each kernel's first is its ladder configuration, measured as a tuning row
TUNE_SPEEDS = {
    ("c_warptile", "128x128x16_64x64_s1"): (1.01, 1.01),
    ("c_warptile", "64x128x8_32x64_s1"): (0.85, 1.20),  # best at 1024³
    ("c_warptile", "128x256x8_64x64_s2"): (0.95, 0.77),  # best at 4096³
    ("c_warptile", "256x128x8_64x64_s2"): (1.10, 0.80),
    ("c_warptile", "128x128x32_32x64_s2"): (1.30, None),
    ("h_wmma_pipe_bf16", "128x128x32_64x32_s3"): (0.99, 1.02),
    ("h_wmma_pipe_bf16", "64x128x32_32x64_s4"): (0.90, 1.10),  # best at 1024³
    ("h_wmma_pipe_bf16", "128x256x32_64x64_s3"): (1.05, 0.88),  # best at 4096³
}


def test_tuning_page_ranks_configs(tmp_path, monkeypatch):
    """A tuning run on one H200, written here schema-2 style (cuBLAS launched directly, so every kernel row is
    flagged), beside every shipped dataset: the page ranks each cell's configurations against the run's own ladder
    rows (not h200-reference's), leaves out the ladder rows of GPUs that did not tune, and shows the flagged rows
    once the sidebar's switch is on."""
    rng = random.Random(41)
    dev = device("H200", "NVIDIA H200", "GPU-7e570000-0000-0000-0000-000000000004", "node-t", "9.0", 132)
    tune = {s.name: s for s in tuning_stages(["c_warptile", "h_wmma_pipe_bf16"])}
    rows, t = [], dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    for i, size in enumerate((1024, 4096)):
        for kernel, base, peak in (("c_warptile", "cublas_fp32", 50.0), ("h_wmma_pipe_bf16", "cublas_bf16", 700.0)):
            base_ms = 2 * size**3 / (peak * 1e9)
            ladder_ms = base_ms / 0.6
            cells = [(STAGES[base], base_ms), (STAGES[kernel], ladder_ms)]
            cells += [
                (tune[f"{k}_tune_{c}"], f[i] and ladder_ms * f[i]) for (k, c), f in TUNE_SPEEDS.items() if k == kernel
            ]
            for stage, ms in cells:
                t += dt.timedelta(seconds=1)
                row = {**cell_row(dev, stage, Cell(stage.name, size, size, size, 0), "tune", "ok"), "timestamp": t}
                if ms is None:
                    row.update(status="failed_verification", verified=False, status_reason="outside tolerance (test)")
                    rows.append(row)
                    continue
                timed = _timed(row, ms, base_ms, rng, 1980, throttled=False)
                if stage.name == base:
                    timed["launch_method"] = "direct"  # as the schema-2 harness launched cuBLAS
                rows.append(timed)
    write_rows(rows, str(tmp_path / "tuning"))
    hidden = sum(r["status"] == "ok" and not r["stage"].startswith("cublas") for r in rows)
    at = app(monkeypatch, str(tmp_path / "tuning"), *sorted(str(p) for p in SHIPPED.iterdir() if (p / "rows").is_dir()))
    at.switch_page("views/tuning.py").run()
    assert f"⚑ {hidden} rows hidden (runs tuning/tune)" in texts(at) and not at.get("vega_lite_chart")
    at.toggle(key="show_flagged").set_value(True).run()
    assert not at.exception, [e.message for e in at.exception]
    table = at.dataframe[0].value
    assert len(table) == 4 and set(table["gpu_model"]) == {"H200"} and table["ladder_same_run"].all()
    assert set(zip(table["kernel"], table["size_label"])) == {
        (k, s) for k in ("c_warptile", "h_wmma_pipe_bf16") for s in ("1024³", "4096³")
    }
    assert at.selectbox(key="tuning_gpu").options == ["H200"]
    for _, line in table.iterrows():
        i = ("1024³", "4096³").index(line["size_label"])
        mine = [r for r in rows if r["m"] == (1024, 4096)[i] and r["status"] == "ok"]
        ladder_ms = next(r["median_ms"] for r in mine if r["stage"] == line["kernel"])
        tuned = {
            r["stage"].split("_tune_")[1]: r["median_ms"]
            for r in mine
            if r["stage"].startswith(line["kernel"] + "_tune_")
        }
        best = min(tuned, key=tuned.get)
        assert line["best_config"] == best and line["configs"] == len(tuned), line
        assert line["failed"] == sum(f[i] is None for (k, _), f in TUNE_SPEEDS.items() if k == line["kernel"])
        assert line["ladder_ms"] == pytest.approx(ladder_ms), "the tuning run's own ladder row, not h200-reference's"
        assert line["bought"] == pytest.approx(ladder_ms / tuned[best])
    big = table[(table["kernel"] == "c_warptile") & (table["size_label"] == "4096³")].iloc[0]
    assert big["best_config"] == "128x256x8_64x64_s2" and big["bought"] == pytest.approx(1 / 0.77, abs=0.01)
    assert (big["configs"], big["failed"], big["ladder_rank"]) == (4, 1, "3 of 4")
    assert big["ladder_config"] == "128x128x16_64x64_s1"
    specs = json.dumps(vega_specs(at), ensure_ascii=False)
    assert len(at.get("vega_lite_chart")) == 2 and "ladder stage (128x128x16_64x64_s1)" in specs
    assert "64x128x8_32x64_s1: best at 1024³" in specs and "128x256x8_64x64_s2: best at 4096³" in specs
    assert "⚑" in chart_values(at), "the tuning rows' % compare unlike launches: their marks say so"
    y_scales = [enc["y"].get("scale", {}) for spec in vega_specs(at)[:1] for enc in _encodings(spec) if "y" in enc]
    assert not any(s.get("type") == "log" for s in y_scales)
    at.toggle(key="tuning_log").set_value(True).run()
    y_scales = [enc["y"].get("scale", {}) for spec in vega_specs(at)[:1] for enc in _encodings(spec) if "y" in enc]
    assert any(s.get("type") == "log" for s in y_scales)


def test_tuning_page_without_tuning_rows_says_how_to_get_them(farm_dataset, monkeypatch):
    at = app(monkeypatch, str(farm_dataset))
    at.switch_page("views/tuning.py").run()
    assert not at.exception
    assert "No tuning rows in the loaded data" in texts(at) and "python farm/sweep.py --plan plans/tune.toml" in texts(
        at
    )
    assert not at.get("vega_lite_chart")


def test_flagged_rows_are_hidden_until_the_switch_brings_them_back_flagged(tmp_path, monkeypatch):
    """Schema-2 style data (cuBLAS launched directly, kernels from CUDA graphs): by default its kernels' rows enter no
    median, spread or axis, and every page says how many are hidden; the sidebar switch brings them back with a
    warning and ⚑ on every mark that pools one; downloads keep the flag column."""
    rows = make_rows("v2", 1, dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=2), seed=3, gpus=GPUS[2:])
    for r in rows:
        if r["stage"] == "cublas_fp32" and r["status"] == "ok":
            r["launch_method"] = "direct"
    write_rows(rows, str(tmp_path / "old"))
    write_rows(
        make_rows("v3", 1, dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1), seed=4, gpus=GPUS[2:]),
        str(tmp_path / "new"),
    )
    at = app(monkeypatch, str(tmp_path / "old"), str(tmp_path / "new"))
    hidden = sum(r["status"] == "ok" and r["stage"] != "cublas_fp32" for r in rows)
    for page in ("ladder", "scaling", "tuning", "peak", "telemetry", "data"):
        at.switch_page(f"views/{page}.py").run()
        assert not at.exception, page
        assert f"⚑ {hidden} rows hidden (runs old/v2)" in texts(at), page
        assert "⚑" not in chart_values(at), page
    at.switch_page("views/ladder.py").run()
    table = at.dataframe[0].value
    assert (table.loc[table["rows"].notna(), "unlike_launches"] == 0).all() and "⚑" not in "".join(table["flag"])
    at.toggle(key="show_flagged").set_value(True).run()
    for page in ("ladder", "scaling", "peak", "data"):
        at.switch_page(f"views/{page}.py").run()
        assert not at.exception, page
        warning = next(w.value for w in at.warning if "⚑" in w.value)
        assert (
            f"{hidden} flagged rows shown (runs old/v2)" in warning and "baseline cublas_fp32 as direct" in warning
        ), page
        if page != "data":
            assert "⚑" in chart_values(at), page
    at.switch_page("views/ladder.py").run()
    table = at.dataframe[0].value
    measured = table  # the published figures have a table of their own
    assert (measured.loc[measured["stage"] != "cublas_fp32", "unlike_launches"] > 0).all()
    assert measured.loc[measured["stage"] != "cublas_fp32", "flag"].str.startswith("⚑").all()
    L = data.load_uncached([str(tmp_path / "old")])
    exported = data_page.export_table(L.rows, data.ROW_SCHEMA).to_pandas()
    assert (exported["launch_flag"] != "").sum() == hidden


def test_every_mark_says_where_it_came_from_and_never_null(farm_dataset):
    """Tooltips carry the cards, driver, CUDA/NVRTC, commit, SM clock and power state of what a mark pools, and how many
    runs, commits and cards that is; a value that is missing reads '—', never null."""
    L = data.load_uncached([str(farm_dataset)])
    sc = scaling.scaling(frames.timed(L.rows))
    cell = sc[(sc["stage"] == "regblock") & (sc["size_label"] == "2048³") & (sc["gpu_model"] == "H100-80GB-HBM3")].iloc[
        0
    ]
    assert cell["pooled"] == f"{cell['rows']} rows from 2 runs, 1 commit, 2 cards"
    assert cell["cards"].startswith("2 cards: H100-80GB-HBM3 · GPU-1a2b3c4d") and cell["driver"] == "580.95.05"
    assert cell["cuda_nvrtc"] == "13.0 / 13.0" and cell["sm_clock"] == "1980 MHz median (max 1980)"
    assert cell["power_thermal"].startswith("power-capped in ") and cell["flag"] == ""
    lad = ladder.ladder(L.rows, ladder.published_figures(), "simt_fp32", "2048³", ladder.stage_info())
    for spec in (scaling.scaling_chart(sc).to_dict(), ladder.ladder_chart(lad, "2048³").to_dict()):
        tips = {
            t["field"]: t["title"] for enc in _encodings(spec) for t in enc.get("tooltip", []) if isinstance(t, dict)
        }
        assert {
            "pooled",
            "GPU cards",
            "driver",
            "CUDA runtime / NVRTC",
            "commit",
            "SM clock",
            "power / thermal",
        } <= set(tips.values())
        shown = [r.get(f) for d in spec.get("datasets", {}).values() for r in d for f in tips]
        assert None not in shown and not any(v != v for v in shown if isinstance(v, float)), "a tooltip would read null"


def test_dashboard_listens_on_localhost_when_started_from_the_repo_root():
    root = Path(APP).parent.parent
    shown = subprocess.run(
        [sys.executable, "-m", "streamlit", "config", "show"], cwd=root, capture_output=True, text=True, timeout=120
    ).stdout
    assert (
        '\naddress = "localhost"' in shown
    )  # from .streamlit/config.toml, not a default (Streamlit's is all interfaces)


def _listening(port: int) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp* writes them) of the sockets listening on `port`."""
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:
                out.add(address)
    return out


def test_farm_dashboard_listens_on_localhost_wherever_it_is_started(tmp_path):
    """`farm dashboard` from a folder with no .streamlit/config.toml: loopback only, usage statistics off."""

    from dashboard.screenshot import free_port, wait_healthy

    port = free_port()
    root = Path(APP).parent.parent
    proc = subprocess.Popen(
        [sys.executable, "-m", "farm", "dashboard", "--port", str(port), "--data", str(tmp_path)],
        cwd=tmp_path,
        env={**__import__("os").environ, "PYTHONPATH": str(root)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}")
        addresses = _listening(port)
        assert addresses and addresses <= {"0100007F", "00000000000000000000000001000000"}, addresses  # 127.0.0.1, ::1
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_opening_the_dashboard_to_a_team_is_an_explicit_flag_and_says_what_it_exposes(monkeypatch, capsys, tmp_path):
    from farm import cli

    calls = []
    monkeypatch.setattr("os.execv", lambda exe, argv: calls.append(argv))
    a, b = (str(tmp_path / name) for name in "ab")  # --data must name something that is there
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    cli.main(["dashboard", "--host", "0.0.0.0", "--data", a, "--data", b])
    [argv] = calls
    assert "--server.address=0.0.0.0" in argv and "--browser.gatherUsageStats=false" in argv
    assert argv[argv.index("--") + 1 :] == ["--data", a, "--data", b]
    assert "no login" in capsys.readouterr().err
    cli.main(["dashboard"])
    assert "--server.address=localhost" in calls[-1] and not capsys.readouterr().err


def test_reproducibility_leads_with_the_untrusted_count(farm_dataset, monkeypatch):
    at = app(monkeypatch, str(farm_dataset))
    at.switch_page("views/reproducibility.py").run()
    assert not at.exception
    cells = at.dataframe[0].value
    untrusted = int((cells["issues"] != "ok").sum())
    assert 0 < untrusted < len(cells)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["untrusted cells"] == str(
        untrusted
    ) and f"{untrusted} of {len(cells)} cells cannot be trusted" in texts(at)
    assert [t.label for t in at.tabs] == [
        "Spread of samples",
        "A/A: repeats of one run",
        "GPU to GPU: same model, same run",
        "Run to run",
    ]


def test_ladder_shows_published_figures_only_at_their_own_size(farm_dataset, monkeypatch):
    at = app(monkeypatch, str(farm_dataset))
    at.switch_page("views/ladder.py").run()
    assert at.selectbox(key="ladder_size").value == "2048³"  # the write-up's size, where we measured too
    assert set(at.dataframe[1].value["source"]) == {"published (RTX 3050 Laptop)"}  # beside the measured table
    at.selectbox(key="ladder_size").select("1024³").run()
    assert not at.exception
    assert len(at.dataframe) == 1, "the measured table alone: no published one at 1024³"
    assert "simt_fp32 are at 2048³ only" in texts(at)


def test_time_vs_clock_axis_is_not_set_by_outliers(farm_dataset):
    L = data.load_uncached([str(farm_dataset)])
    ct = telemetry.clock_vs_time(L.rows)
    ct.loc[ct.index[:3], "rel_pct"] = [623.0, 540.0, -80.0]  # three rows far off, as schema-2 rows were
    spec = telemetry.clock_time_chart(ct).to_dict()
    [domain] = {tuple(enc["y"]["scale"]["domain"]) for enc in _encodings(spec) if "y" in enc and "scale" in enc["y"]}
    assert domain[1] < 50 and domain[0] == -domain[1]
    assert "row(s) beyond" in spec["title"]["subtitle"]


# ---------------------------------------------------------------- LLM shapes

LLM_FRACTIONS = {"d_tma": 0.55, "d_multicast": 0.9}  # of cuBLAS in BF16 from M = 1024 on; half below, FP16 0.9x


def llm_rows() -> list[dict]:
    """Walk D's d_tma and d_multicast in BF16 and FP16 with cuBLAS and cuBLASLt (5 % faster) at every shape of
    Llama-3-8B on one H100, plus one failed d_split_k_bf16 row at 1x4096x4096 whose % would lead that cell were it
    counted."""
    rng = random.Random(7)
    dev, clock, _ = GPUS[0]
    rows, t = [], dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)
    for m, n, k in MODELS[0].shapes():
        for dtype in ("bf16", "fp16"):
            base_ms = 2 * m * n * k / 600e9 + 0.01
            stages = [(f"cublas_{dtype}", base_ms), (f"cublaslt_{dtype}", 0.95 * base_ms)]
            scale = (1.0 if m >= 1024 else 0.5) * (1.0 if dtype == "bf16" else 0.9)
            stages += [(f"{s}_{dtype}", base_ms / (f * scale)) for s, f in LLM_FRACTIONS.items()]
            for name, ms in stages:
                t += dt.timedelta(milliseconds=400)
                row = {**cell_row(dev, STAGES[name], Cell(name, m, n, k, 0), "llm", "ok"), "timestamp": t}
                rows.append(_timed(row, ms, base_ms, rng, clock, throttled=False))
    failed = cell_row(dev, STAGES["d_split_k_bf16"], Cell("d_split_k_bf16", 1, 4096, 4096, 0), "llm", "ok")
    failed = _timed({**failed, "timestamp": t}, 0.001, 0.01, rng, clock, throttled=False)
    rows.append({**failed, "status": "failed_verification", "verified": False, "status_reason": "test"})
    return rows


def test_llm_page_shows_a_panel_per_layer_and_the_reports_geomean(tmp_path, monkeypatch):
    """Per layer of the model a panel, token count on x; the headline's geometric mean is the report's; a failed
    row enters no cell."""
    write_rows(llm_rows(), str(tmp_path / "llm"))
    at = app(monkeypatch, str(tmp_path / "llm"))
    at.switch_page("views/llm.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.selectbox(key="llm_model").value == MODELS[0] and at.selectbox(key="llm_family").value == "hopper_d"
    [spec] = vega_specs(at)
    assert spec["facet"]["column"]["field"] == "layer" and spec["facet"]["column"]["sort"] == list(MODELS[0].layers())
    values = chart_values(at)
    assert all(layer in values for layer in MODELS[0].layers()) and "vendor best (cuBLAS or cuBLASLt)" in values
    heads, cells = at.dataframe[0].value, at.dataframe[1].value
    assert heads[["gpu_model", "dtype", "shapes_measured"]].values.tolist() == [
        ["H100-80GB-HBM3", "bf16", 24],
        ["H100-80GB-HBM3", "fp16", 24],
    ]
    printed = [line.split(" | ") for line in headline_table(str(tmp_path / "llm")).splitlines() if "Llama-3-8B" in line]
    assert [f"{v:.1f}" for v in heads["geomean_pct_of_cublas"]] == [p[5] for p in printed]
    assert [f"{v:.1f}" for v in heads["geomean_pct_of_vendor_best"]] == [p[6] for p in printed]
    assert heads["geomean_pct_of_cublas"].iloc[0] == pytest.approx(100 * (0.45**0.5 * 0.9**0.5), rel=0.02)
    assert len(cells) == 2 * 24 and set(cells["stage"]) == {"d_multicast_bf16", "d_multicast_fp16"}, "failed row out"
    assert (cells["rows"] == 1).all() and cells["pct_of_vendor_best"].lt(cells["pct_of_cublas"]).all()
    assert "failed_verification" not in values


def test_llm_page_takes_fp8_rows_against_cublaslt_fp8(tmp_path, monkeypatch):
    """Walk F at Llama-3-8B's decode shapes (M = 1 and 16): its own family and precision, % of cuBLASLt FP8 (the
    class's baseline, named on the headline) and of the vendor best, and the FP8 plan named for the missing shapes."""
    rng = random.Random(3)
    dev, clock, _ = GPUS[0]
    rows, t = [], dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)
    for m, n, k in MODELS[0].shapes():
        if m > 16:
            continue
        base_ms = 2 * m * n * k / 1200e9 + 0.006
        for name, ms in (
            ("cublaslt_fp8_e4m3", base_ms),
            ("f_multicast_fp8", base_ms / 0.85),
            ("f_mma_overlap_fp8", base_ms / 0.3),
        ):
            t += dt.timedelta(milliseconds=400)
            row = {**cell_row(dev, STAGES[name], Cell(name, m, n, k, 0), "llm-fp8", "ok"), "timestamp": t}
            rows.append(_timed(row, ms, base_ms, rng, clock, throttled=False))
    write_rows(rows, str(tmp_path / "fp8"))
    at = app(monkeypatch, str(tmp_path / "fp8"))
    at.switch_page("views/llm.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.selectbox(key="llm_family").value == "hopper_fp8"
    in_cell, alone = at.metric  # both geometric means: against the baseline in the cell and timed alone
    assert in_cell.label == "H100-80GB-HBM3 · fp8_e4m3 · in the cell"
    assert alone.label == "H100-80GB-HBM3 · fp8_e4m3 · timed alone"
    assert in_cell.value.endswith("% of cublaslt_fp8_e4m3") and alone.value.endswith("% of cublaslt_fp8_e4m3")
    heads, cells = at.dataframe[0].value, at.dataframe[1].value
    assert heads["shapes_measured"].tolist() == [8] and heads["geomean_pct_of_cublas"].iloc[0] == pytest.approx(
        85, rel=0.02
    )
    assert heads["geomean_pct_of_vendor_best"].iloc[0] == pytest.approx(85, rel=0.02)
    assert set(cells["stage"]) == {"f_multicast_fp8"}
    assert any("plans/llm_fp8.toml" in w.value for w in at.warning)


def test_llm_page_without_llm_rows_names_the_plan(farm_dataset, monkeypatch):
    at = app(monkeypatch, str(farm_dataset))
    at.switch_page("views/llm.py").run()
    assert not at.exception
    assert "No LLM-shape rows" in texts(at) and "plans/llm.toml" in texts(at) and not at.get("vega_lite_chart")
    assert llm.llm_cells(data.load_uncached([str(farm_dataset)]).rows).empty


def test_llm_page_on_the_shipped_data_says_the_plan_has_not_run(monkeypatch):
    """The H100 reference shares two shapes with Llama-3-8B (4096³, q_proj at M = 4096; walk D's tail 1x4096x4096,
    q_proj in decoding): the page shows them and says that the geometric mean covers two shapes of 24, naming the
    plan."""
    at = app(monkeypatch, str(SHIPPED / "h100-reference"))
    at.switch_page("views/llm.py").run()
    assert not at.exception, [e.message for e in at.exception]
    warning = next(w.value for w in at.warning if "plans/llm.toml" in w.value)
    assert "Only 2 of 24 shapes of Llama-3-8B measured (1x4096x4096, 4096x4096x4096)" in warning
    assert at.dataframe[0].value["shapes_measured"].eq(2).all()


def test_ladder_puts_every_tf32_family_in_one_ladder(tmp_path, monkeypatch):
    """Walk B's TF32 stages (family tf32) and the wgmma ones (hopper_tf32) in one ladder against cublas_tf32: the
    precision view lists both families' stages in catalog order, the step onto wgmma measured across the families."""
    rng = random.Random(11)
    dev, clock, _ = GPUS[0]
    base_ms, t, rows = 2.0, dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1), []
    fractions = {"cublas_tf32": 1.0, "tf32_bt": 0.2, "tf32_swizzle_bcf_dbf": 0.32, "tf32_wgmma": 0.6}
    fractions |= {"tf32_staged_epilogue": 0.99, "naive": 0.1, "cublas_fp32": 1.0}
    for name, f in fractions.items():
        t += dt.timedelta(seconds=1)
        row = {**cell_row(dev, STAGES[name], Cell(name, 4096, 4096, 4096, 0), "tf", "ok"), "timestamp": t}
        rows.append(_timed(row, base_ms / f, base_ms, rng, clock, throttled=False))
    write_rows(rows, str(tmp_path / "tf32"))
    at = app(monkeypatch, str(tmp_path / "tf32"))
    at.switch_page("views/ladder.py").run()
    view = "every tf32 family (tf32, hopper_tf32)"
    assert view in at.selectbox(key="ladder_family").options
    assert not any(o.startswith("every fp32") for o in at.selectbox(key="ladder_family").options), "one fp32 family"
    at.selectbox(key="ladder_family").select(view).run()
    assert not at.exception, [e.message for e in at.exception]
    table = at.dataframe[0].value
    assert table["stage"].tolist() == [
        "tf32_bt",
        "tf32_swizzle_bcf_dbf",
        "tf32_wgmma",
        "tf32_staged_epilogue",
        "cublas_tf32",
    ]
    step = table[table["stage"] == "tf32_wgmma"].iloc[0]
    assert step["prev_stage"] == "tf32_swizzle_bcf_dbf" and step["gain"] == pytest.approx(0.6 / 0.32, rel=0.03)
    assert len(vega_specs(at)) == 1


# ---------------------------------------------------------------- % of the baseline timed alone


def partner_shifted(rows: list[dict], shift: float) -> list[dict]:
    """`rows` with every kernel's in-cell baseline `shift` slower than the baseline's own cells, as beside a kernel
    that draws more power than cuBLAS at the power cap: its in-cell % overstates it by 1 + shift."""
    for r in rows:
        if r["status"] == "ok" and r["stage"] != r["baseline"]:
            r["baseline_median_ms"] *= 1 + shift
            r["pct_of_baseline"] = 100 * r["baseline_median_ms"] / r["median_ms"]
    return rows


def encoded(at: AppTest, channel: str = "x") -> set[str]:
    """The fields the page's charts put on `channel`."""
    return {e[channel]["field"] for spec in vega_specs(at) for e in _encodings(spec) if "field" in e.get(channel, {})}


BOTH_TIPS = {  # whichever % a chart plots
    "% of cuBLAS in the cell (median)",
    "% of cuBLAS timed alone (median)",
    "partner shift: cuBLAS beside it slower than alone by (%)",
}


def tooltip_titles(at: AppTest) -> set[str]:
    return {
        t["title"]
        for spec in vega_specs(at)
        for e in _encodings(spec)
        for t in e.get("tooltip", [])
        if isinstance(t, dict)
    }


def rtx_alone_missing_at_2048(tmp_path) -> str:
    """An H100 and an RTX 4090, cuBLAS 5 % slower beside each kernel than alone; the RTX 4090's run timed no cuBLAS
    cell of its own at 2048³, so its five kernel cells there have no alone baseline."""
    start = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    rows = partner_shifted(make_rows("r1", 1, start, seed=21, gpus=[GPUS[0], GPUS[2]]), 0.05)
    rows = [r for r in rows if not (r["gpu_model"] == "RTX-4090" and r["stage"] == "cublas_fp32" and r["m"] == 2048)]
    write_rows(rows, str(tmp_path / "shifted"))
    return str(tmp_path / "shifted")


def test_ladder_plots_the_pct_of_the_baseline_timed_alone_when_asked(tmp_path, monkeypatch):
    """In the cell by default; picked, the bars are each cell's % of cuBLAS timed alone (pct_of_alone_baseline); the
    RTX 4090's kernel cells at 2048³ are counted and drawn as missing."""
    at = app(monkeypatch, rtx_alone_missing_at_2048(tmp_path))
    at.switch_page("views/ladder.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.selectbox(key="ladder_size").value == "2048³"
    assert at.radio(key="ladder_pct_basis").value == frames.IN_CELL
    assert "pct" in encoded(at) and "pct_alone" not in encoded(at)
    assert "5 of 10 cells have no alone baseline" in texts(at) and "overstates" in texts(at)

    at.radio(key="ladder_pct_basis").set_value(frames.ALONE).run()
    assert not at.exception, [e.message for e in at.exception]
    assert "pct_alone" in encoded(at) and "pct" not in encoded(at)
    assert "isValid(datum.pct_alone)" in json.dumps(vega_specs(at)), "a missing % is no bar"
    assert tooltip_titles(at) >= BOTH_TIPS
    [plotted] = [f for f in chart_frames(at) if "pct_alone" in f.columns]
    kernels = plotted[(plotted["kind"] == "measured") & (plotted["family"] != "baseline")].set_index(
        ["source", "stage"]
    )
    L = data.load_uncached([str(tmp_path / "shifted")])
    ok = frames.timed(L.rows)
    ok = ok[(ok["m"] == 2048) & (ok["family"] != "baseline")].set_index(["gpu_model", "stage"])
    h100 = [("H100-80GB-HBM3", s) for s in KERNELS]
    assert kernels.loc[h100, "pct_alone"].tolist() == pytest.approx(ok.loc[h100, "pct_of_alone_baseline"].tolist())
    shifted = (1.05 * kernels.loc[h100, "pct_alone"]).tolist()  # cuBLAS's own cell has noise of its own
    assert kernels.loc[h100, "pct"].tolist() == pytest.approx(shifted, rel=0.01)
    rtx = [("RTX-4090", s) for s in KERNELS]
    assert kernels.loc[rtx, "pct_alone"].isna().all(), "no alone baseline: missing, not 0"
    assert kernels.loc[rtx, "pct"].gt(0).all() and kernels.loc[rtx, "pct_label"].eq("").all()
    table = at.dataframe[0].value
    assert table["pct_alone"].isna().sum() == 5 and table["partner_shift"].dropna().gt(4).all()


def test_llm_page_plots_and_heads_with_the_pct_of_the_baseline_timed_alone(tmp_path, monkeypatch):
    """Both geometric means in the headline; picked, the solid lines are the best stages' % of their baseline timed
    alone. The run timed no cuBLAS BF16 cell of its own at 1x4096x4096: that cell is counted, left out of the lines
    (not 0), and the BF16 alone geometric mean is not computed over fewer shapes."""
    rows = partner_shifted(llm_rows(), 0.04)
    rows = [r for r in rows if not (r["stage"] == "cublas_bf16" and (r["m"], r["n"], r["k"]) == (1, 4096, 4096))]
    write_rows(rows, str(tmp_path / "llm"))
    at = app(monkeypatch, str(tmp_path / "llm"))
    at.switch_page("views/llm.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.radio(key="llm_pct_basis").value == frames.IN_CELL
    assert "1 of 48 cells have no alone baseline" in texts(at)
    bf16_in, bf16_alone, fp16_in, fp16_alone = (m.value for m in at.metric)
    assert bf16_alone == "—" and bf16_in.endswith("% of cublas_bf16")
    assert float(fp16_in.split()[0]) == pytest.approx(1.04 * float(fp16_alone.split()[0]), rel=0.01)
    heads = at.dataframe[0].value
    assert heads["geomean_pct_of_alone_baseline"].isna().tolist() == [True, False]

    def solid(at: AppTest, basis: frames.PctBasis) -> pd.Series:
        [long] = [f for f in chart_frames(at) if "against" in f.columns]
        line = long[long["against"] == llm.against(basis)[llm.PCT_COLUMNS[basis]]]
        return line.set_index(["dtype", "shape"])["pct"].sort_index()

    cells = at.dataframe[1].value.set_index(["dtype", "shape"]).sort_index()
    assert solid(at, frames.IN_CELL).tolist() == pytest.approx(cells["pct_of_cublas"].tolist())
    at.radio(key="llm_pct_basis").set_value(frames.ALONE).run()
    assert not at.exception, [e.message for e in at.exception]
    alone = solid(at, frames.ALONE)
    assert tooltip_titles(at) >= {t.replace("cuBLAS", "its baseline") for t in BOTH_TIPS}
    assert alone.tolist() == pytest.approx(cells["pct_of_alone_baseline"].tolist(), nan_ok=True)
    assert alone.isna().sum() == 1 and pd.isna(alone[("bf16", "1x4096x4096")]), "missing, not 0"
    assert alone.dropna().gt(40).all()


def test_scaling_heat_map_plots_the_pct_of_the_baseline_timed_alone_when_asked(tmp_path, monkeypatch):
    """The heat map's colour is the % in the cell by default, the % timed alone once picked; the RTX 4090's cells at
    2048³ are counted, and left blank (no rect, no label), never coloured as 0."""
    at = app(monkeypatch, rtx_alone_missing_at_2048(tmp_path))
    at.switch_page("views/scaling.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.selectbox(key="scaling_size").value == "2048³"
    assert at.radio(key="scaling_pct_basis").value == frames.IN_CELL
    assert "pct" in encoded(at, "color") and "pct_alone" not in encoded(at, "color")
    assert "5 of 10 cells have no alone baseline" in texts(at)
    assert tooltip_titles(at) >= BOTH_TIPS, "the throughput chart's tooltips carry both too"

    at.radio(key="scaling_pct_basis").set_value(frames.ALONE).run()
    assert not at.exception, [e.message for e in at.exception]
    assert "pct_alone" in encoded(at, "color") and "pct" not in encoded(at, "color")
    heat = json.dumps(vega_specs(at)[-1])
    assert "isValid(datum.pct_alone)" in heat and "datum.pct_alone > 60" in heat
    [cells] = [f for f in chart_frames(at) if "pct_label" in f.columns]
    cells = cells.set_index(["gpu_model", "stage"])
    h100 = [("H100-80GB-HBM3", s) for s in KERNELS]
    assert cells.loc[h100, "pct"].tolist() == pytest.approx((1.05 * cells.loc[h100, "pct_alone"]).tolist(), rel=0.01)
    rtx = [("RTX-4090", s) for s in KERNELS]
    assert cells.loc[rtx, "pct_alone"].isna().all(), "no alone baseline: missing, not 0"
    assert cells.loc[rtx, "pct"].gt(0).all() and cells.loc[rtx, "pct_label"].eq("").all()


def test_tuning_plots_the_pct_of_the_baseline_timed_alone_when_asked(tmp_path, monkeypatch):
    """Measured as % of cuBLAS, the Tuning page offers the same choice: both charts plot the % timed alone once picked.
    The run timed no cuBLAS cell of its own at 2048³: its five cells there (the ladder stage and four configurations)
    are counted and drawn as missing."""
    rng, (dev, clock, _) = random.Random(31), GPUS[0]
    stages = [STAGES["cublas_fp32"], STAGES["c_warptile"], *tuning_stages(["c_warptile"])[:4]]
    rows, t = [], dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    for size in (1024, 2048):
        base_ms = 2 * size**3 / 40e9
        for i, stage in enumerate(stages[size == 2048 :]):  # no cuBLAS cell at 2048³
            t += dt.timedelta(seconds=1)
            row = {**cell_row(dev, stage, Cell(stage.name, size, size, size, 0), "tune", "ok"), "timestamp": t}
            rows.append(_timed(row, base_ms / (1 - 0.05 * i), base_ms, rng, clock, throttled=False))
    write_rows(partner_shifted(rows, 0.05), str(tmp_path / "tune"))
    at = app(monkeypatch, str(tmp_path / "tune"))
    at.switch_page("views/tuning.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert "tflops" in encoded(at, "y")
    assert not [r for r in at.radio if r.key == "tuning_pct_basis"], "no % plotted: no choice of %"

    at.radio(key="tuning_metric").set_value("pct").run()
    assert at.radio(key="tuning_pct_basis").value == frames.IN_CELL
    assert "pct" in encoded(at, "y") and "pct" in encoded(at, "x") and "pct_alone" not in encoded(at, "y")
    assert "5 of 10 cells have no alone baseline" in texts(at)

    at.radio(key="tuning_pct_basis").set_value(frames.ALONE).run()
    assert not at.exception, [e.message for e in at.exception]
    assert "pct_alone" in encoded(at, "y") and "pct_alone" in encoded(at, "x")  # every configuration; the ranking
    assert "pct" not in encoded(at, "y") | encoded(at, "x")
    assert "isValid(datum.pct_alone)" in json.dumps(vega_specs(at)), "a missing % is no mark"
    assert tooltip_titles(at) >= BOTH_TIPS
    [lines, _] = [f for f in chart_frames(at) if "pct_alone" in f.columns]
    lines = lines.set_index("size_label")
    assert lines.loc["2048³", "pct_alone"].isna().all() and len(lines.loc["2048³"]) == 5, "missing, not 0"
    assert lines.loc["2048³", "pct"].gt(0).all()
    ok = lines.loc["1024³"]
    assert ok["pct"].tolist() == pytest.approx((1.05 * ok["pct_alone"]).tolist(), rel=0.01)
