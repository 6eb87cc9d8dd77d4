"""The Nsight Compute pass without a GPU: parsing ncu's raw CSV, the ncu command through a fake ncu,
the skip paths, the profile table's round trip, and the counters that moved per ladder step."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import farm.measure.ncu
import farm.measure.profiler
from farm.analysis.moves import compare, ladder_moves, moves_table, stage_moves, stage_values
from farm.cells import Cell
from farm.data.dataset import PROFILE, exists, read_table, write_table
from farm.data.profile_metrics import DERIVED, METRICS, QUANTITIES, metrics_markdown
from farm.data.schema import PROFILE_SCHEMA, SCHEMA_VERSION, profile_columns_markdown
from farm.measure.ncu import (
    NcuMissing,
    classify_failure,
    find_ncu,
    named_metrics,
    parse_query_metrics,
    parse_raw_csv,
    parse_value,
)
from farm.measure.profiler import Profiler
from kernels.registry import catalog

ROOT = Path(__file__).resolve().parent.parent
STAGES = {s.name: s for s in catalog()}
DEVICE = {
    "host": "h200-a",
    "gpu_name": "NVIDIA H200",
    "gpu_model": "H200",
    "gpu_uuid": "GPU-7f3e",
    "gpu_index": 0,
    "compute_capability": "9.0",
    "arch": "sm_90",
    "sm_count": 132,
}
BY_QUANTITY = {s.quantity: s for s in METRICS}

# What ncu 2025.3 prints for `--csv --page raw` (auto units, as without --print-units base) on the
# two launches of split-K: ==PROF== progress lines, a header, a units row, one row per launch.
RAW_SPLITK = """==PROF== Connected to process 48211 (/usr/bin/python3.11)
==PROF== Profiling "sgemm_splitk_partial" - 0: 0%....50%....100% - 11 passes
==PROF== Profiling "sgemm_splitk_reduce" - 1: 0%....50%....100% - 11 passes
==PROF== Disconnected from process 48211
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","launch__registers_per_thread","lts__t_sector_hit_rate.pct","sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active","sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"
"","","","","","","","","","","","Mbyte","%","usecond","","register/thread","%","%","%"
"0","48211","python3.11","127.0.0.1","sgemm_splitk_partial","1","7","(256, 1, 1)","(32, 16, 4)","0","9.0","67.11","12.85","1,523.74","1,048,576","128","78.31","61.20","0"
"1","48211","python3.11","127.0.0.1","sgemm_splitk_reduce","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","268.44","88.02","45.89","0","16","12.10","9.75","n/a"
"""

UNITS = {"pct": "%", "bytes": "byte", "time": "nsecond", "per_thread": "register/thread", "count": ""}
NCU_VERSION_TEXT = (
    "NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2025 NVIDIA Corporation\n"
    "Version 2025.3.0.0 (build 36273991) (public-release)\n"
)
PERM_TEXT = (
    "==PROF== Connected to process 5120 (/usr/bin/python3.11)\n"
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters "
    "on the target device 0. For instructions on enabling permissions and to get more information see "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM\n==PROF== Disconnected from process 5120\n"
)


def _number(value: float) -> str:
    """As ncu prints numbers under LC_ALL=C: thousands separators, no exponent."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def raw_csv(kernels: list[tuple[str, dict[str, float | None]]], pid: int = 48211) -> str:
    """ncu's raw page (base units) for launches given as (kernel name, {metric: value})."""
    columns = sorted({m for _, metrics in kernels for m in metrics})
    unit = {s.metric: "sector" if s.metric.startswith("l1tex__t_sectors") else UNITS[s.kind] for s in METRICS}
    head = [
        "ID",
        "Process ID",
        "Process Name",
        "Host Name",
        "Kernel Name",
        "Context",
        "Stream",
        "Block Size",
        "Grid Size",
        "Device",
        "CC",
    ]
    quote = lambda cells: ",".join(f'"{c}"' for c in cells)  # noqa: E731
    lines = [
        f"==PROF== Connected to process {pid} (/usr/bin/python3.11)",
        quote(head + columns),
        quote([""] * len(head) + [unit.get(c, "") for c in columns]),
    ]
    for i, (name, metrics) in enumerate(kernels):
        values = ["n/a" if metrics.get(c) is None else _number(metrics[c]) for c in columns]
        lines.append(
            quote(
                [
                    str(i),
                    str(pid),
                    "python3.11",
                    "127.0.0.1",
                    name,
                    "1",
                    "7",
                    "(128, 1, 1)",
                    "(64, 32, 1)",
                    "0",
                    "9.0",
                    *values,
                ]
            )
        )
    lines.append(f"==PROF== Disconnected from process {pid}")
    return "\n".join(lines) + "\n"


def metrics_for(**quantities: float) -> dict[str, float]:
    """{ncu metric: value} for quantities named as in farm.data.profile_metrics.METRICS."""
    return {BY_QUANTITY[q].metric: v for q, v in quantities.items()}


def no_ncu(monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    monkeypatch.setattr(farm.measure.ncu, "NCU_FALLBACKS", ())
    monkeypatch.delenv("GEMM_FARM_NCU", raising=False)


def records_of(
    stage: str, launches: list[dict[str, float]], m: int = 2048, run_id: str = "r1", device=None
) -> list[dict]:
    """Profile records of one cell built from rendered raw CSV, as the profiler builds them."""
    s = STAGES[stage]
    expected = [] if s.is_baseline else [l.kernel for l in s.launches]  # a library's kernels are its own
    names = expected or ["sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_cublas"]
    kernels = parse_raw_csv(raw_csv(list(zip(names, launches))))
    profiler = Profiler.__new__(Profiler)  # records only: the parts _records reads
    profiler.device, profiler.version, profiler._unavailable = device or DEVICE, "2025.3.0.0", {}
    return profiler._records(s, Cell(stage, m, m, m), run_id, "--csv", kernels, expected, "")


# --------------------------------------------------------------------------------------- parsing


def test_raw_csv_parses_each_launch_with_base_units():
    kernels = parse_raw_csv(RAW_SPLITK)
    assert [k.name for k in kernels] == ["sgemm_splitk_partial", "sgemm_splitk_reduce"]
    partial, reduce = (k.metrics for k in kernels)
    assert partial["dram__bytes_read.sum"] == pytest.approx((67.11e6, "byte"))
    assert partial["gpu__time_duration.sum"] == pytest.approx((1_523_740.0, "ns"))  # usecond -> ns
    assert partial["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == (1_048_576.0, "")
    assert partial["launch__registers_per_thread"] == (128.0, "register/thread")
    assert partial["sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"] == (61.2, "%")
    assert reduce["sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"] == (None, "%")
    assert kernels[0].info["Grid Size"] == "(32, 16, 4)" and kernels[1].info["CC"] == "9.0"


def test_values_and_units_as_ncu_prints_them():
    assert parse_value("1,234,567", "") == (1234567.0, "")
    assert parse_value("2.5", "Gbyte") == (2.5e9, "byte")
    assert parse_value("3", "msecond") == (3e6, "ns")
    assert parse_value("7.5", "ms") == (7.5e6, "ns")
    assert parse_value("12", "Ksector") == (12e3, "sector")
    assert parse_value("n/a", "%") == (None, "%")
    assert parse_value("", "%") == (None, "%")


def test_program_output_and_repeated_headers_are_tolerated():
    text = "hello from the program\n" + RAW_SPLITK + raw_csv([("sgemm_naive", metrics_for(lsu_pipe_pct=96.0))], pid=7)
    kernels = parse_raw_csv(text)
    assert len(kernels) == 3 and kernels[-1].name == "sgemm_naive"
    assert parse_raw_csv("==PROF== Connected to process 1\n==WARNING== No kernels were profiled.\n") == []


def test_failures_are_classified():
    assert classify_failure(PERM_TEXT)[0] == "no_permission"
    assert "NVreg_RestrictProfilingToAdminUsers" in classify_failure(PERM_TEXT)[1]
    status, reason = classify_failure("==ERROR== LibraryNotLoaded: could not load libnvperf_host.so\n")
    assert status == "ncu_unusable" and "LibraryNotLoaded" in reason
    bad = "==ERROR== Failed to find metric sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active\n"
    assert classify_failure(bad) == (
        "ncu_failed",
        "Failed to find metric sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
    )
    assert classify_failure("==PROF== Disconnected from process 1\n") is None


def test_rejected_metrics_are_found_by_whole_name():
    metrics = [s.metric for s in METRICS]
    said = "Failed to find metric l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
    assert named_metrics(metrics, said) == {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"}
    assert named_metrics(metrics, "metric sm__pipe_tensor_op_gmma_cycles_active not found") == {
        "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"
    }


def test_query_metrics_listing():
    text = (
        "Device NVIDIA H200 (GH100)\n" + "-" * 40 + "\nMetric Name      Metric Description\n"
        "dram__bytes_read     # of bytes read from DRAM\nsm__pipe_tensor_op_gmma_cycles_active   # of cycles ...\n"
    )
    assert parse_query_metrics(text) == {"dram__bytes_read", "sm__pipe_tensor_op_gmma_cycles_active"}


# --------------------------------------------------------------------------------------- records


def test_records_name_kernels_by_launch_order_and_derive_ratios():
    launch = metrics_for(
        duration=2.0e6,
        lsu_pipe_pct=55.2,
        registers=255,
        gst_sectors=1000,
        gst_bytes=32000,
        gst_data_bytes=16000,
        shared_bank_conflicts=50,
        shared_wavefronts=1000,
    )
    records = records_of("regblock", [launch])
    by_q = {r["quantity"]: r for r in records}
    assert {r["kernel"] for r in records} == {"sgemm_regblock"} and {r["launch_index"] for r in records} == {0}
    assert by_q["lsu_pipe_pct"]["value"] == 55.2 and by_q["lsu_pipe_pct"]["unit"] == "%"
    assert by_q["lsu_pipe_pct"]["metric"] == "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active"
    assert by_q["duration"]["unit"] == "ns" and by_q["registers"]["kind"] == "per_thread"
    assert by_q["gst_bytes_per_sector"]["value"] == 32.0
    assert by_q["gst_used_bytes_per_sector"]["value"] == 16.0
    assert by_q["shared_bank_conflict_pct"]["value"] == 5.0
    assert by_q["shared_bank_conflict_pct"]["metric"].startswith(
        "100 * l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum / "
    )
    assert all(r["status"] == "ok" and r["gpu_uuid"] == "GPU-7f3e" and r["m"] == 2048 for r in records)


def test_na_is_an_unavailable_row_not_a_zero():
    records = records_of("naive", [metrics_for(duration=1e6, tensor_gmma_pipe_pct=None, lsu_pipe_pct=96.0)])
    gmma = next(r for r in records if r["quantity"] == "tensor_gmma_pipe_pct")
    assert gmma["status"] == "unavailable" and gmma["value"] is None and "n/a" in gmma["status_reason"]


# --------------------------------------------------------------------------------------- skip paths


def test_without_ncu_every_cell_gets_a_reason(monkeypatch, tmp_path):
    no_ncu(monkeypatch)
    with pytest.raises(NcuMissing, match="not on PATH"):
        find_ncu()
    profiler = Profiler(DEVICE)
    cells = [Cell("naive", 256, 256, 256), Cell("cublas_fp32", 256, 256, 256), Cell("gmem_vec", 255, 255, 255)]
    records = profiler.run(cells, "r-skip")
    assert [(r["stage"], r["status"]) for r in records] == [
        ("naive", "no_ncu"),
        ("cublas_fp32", "no_ncu"),
        ("gmem_vec", "skipped"),
    ]
    assert "ncu (Nsight Compute CLI) not found" in records[0]["status_reason"]
    assert "multiple of 4" in records[2]["status_reason"]
    assert all(r["quantity"] is None and r["value"] is None for r in records)
    write_table(records, str(tmp_path), PROFILE)
    back = read_table(str(tmp_path), PROFILE).to_pylist()
    assert sorted(r["status"] for r in back) == ["no_ncu", "no_ncu", "skipped"]


def test_ncu_can_be_switched_off_and_pointed_at(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMM_FARM_NCU", "none")
    with pytest.raises(NcuMissing, match="switched off"):
        find_ncu()
    monkeypatch.setenv("GEMM_FARM_NCU", str(tmp_path / "nowhere" / "ncu"))
    with pytest.raises(NcuMissing, match="not found at"):
        find_ncu()


# A stand-in for ncu: answers --version and --query-metrics, logs each call, and for a
# profiling call writes the report its state directory holds to --log-file (or fails as told).
FAKE_NCU = """#!{python}
import json, os, subprocess, sys
args = sys.argv[1:]
state = os.environ["FAKE_NCU_STATE"]
if args == ["--version"]:
    sys.stdout.write(open(os.path.join(state, "version.txt")).read()); sys.exit(0)
if args[:1] == ["--query-metrics"]:
    sys.stdout.write(open(os.path.join(state, "query.txt")).read()); sys.exit(0)
with open(os.path.join(state, "calls.jsonl"), "a") as f:
    f.write(json.dumps(args) + "\\n")
calls = sum(1 for _ in open(os.path.join(state, "calls.jsonl")))
log = args[args.index("--log-file") + 1]
program = args[args.index("--log-file") + 2:]
mode = open(os.path.join(state, "mode.txt")).read().strip()
if mode == "exec":
    sys.exit(subprocess.run(program).returncode)
if mode == "perm":
    open(log, "w").write(open(os.path.join(state, "perm.txt")).read()); sys.exit(1)
if mode == "reject_once" and calls == 1:
    open(log, "w").write("==ERROR== Failed to find metric sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active\\n")
    sys.exit(1)
open(log, "w").write(open(os.path.join(state, "report.csv")).read())
print("GEMM_FARM_PROFILE_CHILD " + open(os.path.join(state, "marker.json")).read().strip())
"""


@pytest.fixture
def fake_ncu(tmp_path, monkeypatch):
    state = tmp_path / "ncu-state"
    state.mkdir()
    exe = tmp_path / "bin" / "ncu"
    exe.parent.mkdir()
    exe.write_text(FAKE_NCU.format(python=sys.executable))
    exe.chmod(0o755)
    (state / "version.txt").write_text(NCU_VERSION_TEXT)
    # This chip lists every metric but the aggregate tensor pipe.
    listed = [s.metric.split(".")[0] for s in METRICS if s.quantity != "tensor_any_pipe_pct"]
    (state / "query.txt").write_text(
        "Device NVIDIA H200 (GH100)\nMetric Name   Metric Description\n"
        + "\n".join(f"{m}    # a description" for m in listed)
        + "\n"
    )
    (state / "perm.txt").write_text(PERM_TEXT)
    (state / "mode.txt").write_text("ok")
    monkeypatch.setenv("FAKE_NCU_STATE", str(state))
    monkeypatch.setenv("GEMM_FARM_NCU", str(exe))

    class Fake:
        path = str(exe)

        def mode(self, mode: str) -> None:
            (state / "mode.txt").write_text(mode)

        def report(self, kernels, launches) -> None:
            (state / "report.csv").write_text(raw_csv(kernels))
            (state / "marker.json").write_text(json.dumps({"launches": launches, "arch": "sm_90"}))

        def calls(self) -> list[list[str]]:
            path = state / "calls.jsonl"
            return [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []

    return Fake()


def test_profiling_a_cell_through_ncu(fake_ncu):
    fake_ncu.report(
        [
            ("sgemm_splitk_partial", metrics_for(duration=3e6, lsu_pipe_pct=60.0, tensor_pipe_pct=0.0)),
            ("sgemm_splitk_reduce", metrics_for(duration=1e6, lsu_pipe_pct=10.0, tensor_pipe_pct=0.0)),
        ],
        ["sgemm_splitk_partial", "sgemm_splitk_reduce"],
    )
    profiler = Profiler(DEVICE)
    assert profiler.version == "2025.3.0.0"
    records = profiler.profile(Cell("splitk", 2048, 2048, 2048), "r-ncu")
    (args,) = fake_ncu.calls()
    for flag in (
        ["--csv"],
        ["--page", "raw"],
        ["--clock-control", "none"],
        ["--target-processes", "all"],
        ["--profile-from-start", "off"],
        ["--launch-count", "2"],
        ["--print-units", "base"],
    ):
        assert any(args[i : i + len(flag)] == flag for i in range(len(args))), flag
    metrics = args[args.index("--metrics") + 1].split(",")
    assert "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active" in metrics
    assert "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active" not in metrics  # the chip lacks it
    program = args[args.index("--log-file") + 2 :]
    assert program[1:3] == ["-m", "farm.measure.profile_child"] and program[program.index("--stage") + 1] == "splitk"
    ok = [r for r in records if r["status"] == "ok"]
    assert {(r["kernel"], r["launch_index"]) for r in ok} == {("sgemm_splitk_partial", 0), ("sgemm_splitk_reduce", 1)}
    assert all(r["ncu_version"] == "2025.3.0.0" and "--clock-control none" in r["ncu_options"] for r in records)
    missing = {r["quantity"]: r for r in records if r["status"] == "unavailable"}
    assert all(r["kernel"] is None for r in missing.values())  # once per cell, not per kernel
    assert missing["tensor_any_pipe_pct"]["status_reason"] == "not offered on sm_90 by ncu 2025.3.0.0"
    assert "returned no column" in missing["l2_hit_pct"]["status_reason"]  # asked for, absent from this report
    assert "lsu_pipe_pct" not in missing and "tensor_pipe_pct" not in missing
    # the split-K stage's LSU is the duration-weighted mean of its two kernels
    values = stage_values(records)[("GPU-7f3e", "splitk", 2048, 2048, 2048)]["values"]
    assert values["lsu_pipe_pct"][0] == pytest.approx((3 * 60 + 1 * 10) / 4)
    assert values["duration"][0] == pytest.approx(4e6)


def test_counters_not_readable_skip_the_rest_of_the_gpu(fake_ncu):
    fake_ncu.mode("perm")
    profiler = Profiler(DEVICE)
    records = profiler.run([Cell("naive", 256, 256, 256), Cell("tiled", 256, 256, 256)], "r-perm")
    assert [r["status"] for r in records] == ["no_permission", "no_permission"]
    assert "ERR_NVGPUCTRPERM" in records[1]["status_reason"]
    assert len(fake_ncu.calls()) == 1  # the second cell did not try again


def test_a_metric_ncu_rejects_is_dropped_and_the_cell_retried(fake_ncu, monkeypatch):
    monkeypatch.setattr(farm.measure.profiler, "query_metrics", lambda ncu: None)  # no listing: everything is asked for
    fake_ncu.mode("reject_once")
    fake_ncu.report([("sgemm_naive", metrics_for(duration=1e6, lsu_pipe_pct=96.0))], ["sgemm_naive"])
    records = Profiler(DEVICE).profile(Cell("naive", 256, 256, 256), "r-retry")
    first, second = fake_ncu.calls()
    assert "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active" in first[first.index("--metrics") + 1]
    assert "sm__pipe_tensor_cycles_active" not in second[second.index("--metrics") + 1]
    rejected = next(r for r in records if r["quantity"] == "tensor_any_pipe_pct")
    assert rejected["status"] == "unavailable" and "rejected by ncu" in rejected["status_reason"]
    assert next(r for r in records if r["quantity"] == "lsu_pipe_pct")["value"] == 96.0


def test_the_real_child_runs_under_the_command_ncu_gets(fake_ncu):
    """The fake runs the program as ncu would: the child starts from the repo and reports back."""
    fake_ncu.mode("exec")
    records = Profiler(DEVICE, timeout_s=300).profile(Cell("naive", 64, 64, 64), "r-exec")
    (record,) = records
    # No GPU here: the child says why. On a GPU box it runs, and the fake ncu profiled nothing.
    assert record["status"] in ("error", "no_kernels"), record
    if record["status"] == "error":
        assert "Error" in record["status_reason"] or "CUDA" in record["status_reason"]


def test_child_reports_failure_as_a_line():
    proc = subprocess.run(
        [sys.executable, "-m", "farm.measure.profile_child", "--stage", "naive", "--m", "32", "--n", "32", "--k", "32"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [l for l in proc.stdout.splitlines() if l.startswith("GEMM_FARM_PROFILE_")]
    assert len(lines) == 1
    if proc.returncode == 0:  # a GPU is present
        assert json.loads(lines[0].split(" ", 1)[1])["launches"] == ["sgemm_naive"]
    else:
        assert lines[0].startswith("GEMM_FARM_PROFILE_ERROR ") and proc.returncode == 3


# --------------------------------------------------------------------------------------- the table


def test_profile_table_round_trip(tmp_path):
    records = records_of("regblock", [metrics_for(duration=2e6, lsu_pipe_pct=55.2, registers=255)], run_id="r-rt")
    records += records_of(
        "tiled",
        [metrics_for(duration=3e6, lsu_pipe_pct=94.9)],
        run_id="r-rt",
        device={**DEVICE, "gpu_model": "NVIDIA-H100 80GB/HBM3", "gpu_uuid": "GPU-1"},
    )
    files = write_table(records, str(tmp_path), PROFILE)
    assert len(files) == 2 and all("/profile/gpu_model=" in f and "/run_id=r-rt/" in f for f in files)
    back = read_table(str(tmp_path), PROFILE)
    assert back.schema.names == PROFILE_SCHEMA.names and back.num_rows == len(records)
    rows = back.to_pylist()
    lsu = {r["stage"]: r for r in rows if r["quantity"] == "lsu_pipe_pct"}
    assert lsu["regblock"]["value"] == 55.2 and lsu["tiled"]["gpu_model"] == "NVIDIA-H100 80GB/HBM3"
    assert lsu["regblock"]["timestamp"].tzinfo is not None
    assert pq.read_schema(files[0]).metadata[b"gemm_farm_schema_version"] == SCHEMA_VERSION.encode()
    assert read_table(str(tmp_path)).num_rows == 0  # the rows table is untouched
    with pytest.raises(ValueError, match="not_a_column"):
        write_table([{**records[0], "not_a_column": 1}], str(tmp_path), PROFILE)
    with pytest.raises(ValueError, match="unknown table"):
        write_table(records, str(tmp_path), "profiles")
    # the moves read the dataset path directly
    assert stage_values(str(tmp_path))[("GPU-7f3e", "regblock", 2048, 2048, 2048)]["values"]["registers"][0] == 255


def test_the_dataset_card_documents_the_profile_table():
    card = (ROOT / "datasets" / "README.md").read_text()
    assert profile_columns_markdown() in card
    assert metrics_markdown() in card
    for status in ("no_ncu", "no_permission", "ncu_unusable", "ncu_failed", "no_kernels", "unavailable"):
        assert f"`{status}`" in card


def test_every_quantity_is_unique_and_every_kind_known():
    from farm.data.schema import PROFILE_KINDS

    names = [s.quantity for s in (*METRICS, *DERIVED)]
    assert len(names) == len(set(names))
    assert {s.kind for s in (*METRICS, *DERIVED)} <= set(PROFILE_KINDS)
    assert len({s.metric for s in METRICS}) == len(METRICS)


# --------------------------------------------------------------------------------------- the moves

# Walk A on one GPU at 2048^3: counters shaped like the write-up's table of "counter that moved".
WALK_A = {
    "naive": dict(
        dram_throughput_pct=21.0,
        l2_hit_pct=60.0,
        lsu_pipe_pct=96.0,
        fma_pipe_pct=9.0,
        issue_slots_pct=40.0,
        registers=38,
        gst_sectors=131072,
        gst_bytes=131072 * 32,
        gst_data_bytes=131072 * 16,
    ),
    "tiled": dict(
        dram_throughput_pct=43.0,
        l2_hit_pct=62.0,
        lsu_pipe_pct=95.2,
        fma_pipe_pct=20.0,
        issue_slots_pct=44.0,
        registers=40,
        gst_sectors=131072,
        gst_bytes=131072 * 32,
        gst_data_bytes=131072 * 16,
    ),
    "tiled_coalesced": dict(
        dram_throughput_pct=44.0,
        l2_hit_pct=63.0,
        lsu_pipe_pct=94.7,
        fma_pipe_pct=25.0,
        issue_slots_pct=45.0,
        registers=40,
        gst_sectors=65536,
        gst_bytes=65536 * 32,
        gst_data_bytes=65536 * 32,
    ),
    "regblock": dict(
        dram_throughput_pct=40.0,
        l2_hit_pct=55.0,
        lsu_pipe_pct=55.2,
        fma_pipe_pct=39.7,
        issue_slots_pct=53.5,
        registers=255,
        gst_sectors=65536,
        gst_bytes=65536 * 32,
        gst_data_bytes=65536 * 32,
    ),
    "warp_rebalance": dict(
        dram_throughput_pct=41.0,
        l2_hit_pct=54.0,
        lsu_pipe_pct=89.0,
        fma_pipe_pct=48.6,
        issue_slots_pct=68.4,
        registers=168,
        gst_sectors=65536,
        gst_bytes=65536 * 32,
        gst_data_bytes=65536 * 32,
    ),
    "bank_pad_vec": dict(
        dram_throughput_pct=42.0,
        l2_hit_pct=52.0,
        lsu_pipe_pct=64.0,
        fma_pipe_pct=56.3,
        issue_slots_pct=70.0,
        registers=168,
        gst_sectors=65536,
        gst_bytes=65536 * 32,
        gst_data_bytes=65536 * 32,
    ),
    "cublas_fp32": dict(
        dram_throughput_pct=30.0,
        l2_hit_pct=82.0,
        lsu_pipe_pct=30.0,
        fma_pipe_pct=80.0,
        issue_slots_pct=75.0,
        registers=122,
        tensor_pipe_pct=0.0,
    ),
    # two geometry variants share a position: they are a sweep, not ladder steps
    "geom_64x64x8_8x8": dict(lsu_pipe_pct=50.0, fma_pipe_pct=50.0),
    "geom_128x128x8_8x8": dict(lsu_pipe_pct=40.0, fma_pipe_pct=60.0),
}


@pytest.fixture
def walk_a() -> list[dict]:
    records = []
    for stage, quantities in WALK_A.items():
        records += records_of(stage, [metrics_for(duration=1e6, **quantities)])
    return records


def _top(steps: list[dict], stage: str) -> list[str]:
    (step,) = [s for s in steps if s["stage"] == stage]
    return [m["quantity"] for m in step["moves"]]


def test_each_ladder_step_names_the_counter_the_write_up_cites(walk_a):
    steps = ladder_moves(walk_a, top=3)
    assert [(s["previous"], s["stage"]) for s in steps] == [
        ("naive", "tiled"),
        ("tiled", "tiled_coalesced"),
        ("tiled_coalesced", "regblock"),
        ("regblock", "warp_rebalance"),
        ("warp_rebalance", "bank_pad_vec"),
    ]
    assert _top(steps, "tiled")[0] == "dram_throughput_pct"
    assert _top(steps, "tiled_coalesced")[0] == "gst_used_bytes_per_sector"  # 16 -> 32 B/sector: log2 2 = 1
    assert _top(steps, "regblock")[0] == "lsu_pipe_pct"
    assert "issue_slots_pct" in _top(steps, "warp_rebalance")
    assert _top(steps, "bank_pad_vec")[0] == "lsu_pipe_pct"
    regblock = next(s for s in steps if s["stage"] == "regblock")
    lsu = regblock["moves"][0]
    assert (lsu["before"], lsu["after"]) == (94.7, 55.2) and lsu["delta"] == pytest.approx(-39.5)
    assert lsu["text"] == "LSU pipe 94.7 -> 55.2% (-39.5 pp)"
    assert regblock["gpu_uuid"] == "GPU-7f3e" and (regblock["m"], regblock["n"], regblock["k"]) == (2048, 2048, 2048)
    assert [m["rank"] for m in regblock["moves"]] == [1, 2, 3]


def test_one_mover_per_group_and_raw_components_never_ranked(walk_a):
    for step in ladder_moves(walk_a, top=None):
        quantities = [m["quantity"] for m in step["moves"]]
        groups = [QUANTITIES[q].group for q in quantities]
        assert len(groups) == len(set(groups))
        assert not {"duration", "gst_bytes", "gst_sectors", "gst_data_bytes"} & set(quantities)
        assert all(m["score"] > 0 for m in step["moves"])


def test_ranking_puts_points_and_ratios_on_one_scale():
    before = {
        "l2_hit_pct": (30.0, "%", "pct"),
        "shared_ld_bank_conflicts": (150e6, "", "count"),
        "registers": (128.0, "register/thread", "per_thread"),
        "fma_pipe_pct": (40.0, "%", "pct"),
    }
    after = {
        "l2_hit_pct": (90.0, "%", "pct"),
        "shared_ld_bank_conflicts": (48618.0, "", "count"),
        "registers": (128.0, "register/thread", "per_thread"),
        "fma_pipe_pct": (45.0, "%", "pct"),
    }
    moves = compare(before, after, top=None)
    assert [m.quantity for m in moves] == ["shared_ld_bank_conflicts", "l2_hit_pct", "fma_pipe_pct"]
    assert moves[0].score == pytest.approx(abs(math.log2((48618 + 1e4) / (150e6 + 1e4))))
    assert moves[1].score == pytest.approx(6.0) and moves[2].score == pytest.approx(0.5)
    # a count that appears from nothing stays below the noise floor
    tiny = compare({"shared_st_bank_conflicts": (0.0, "", "count")}, {"shared_st_bank_conflicts": (3.0, "", "count")})
    assert tiny[0].score < 0.001


def test_filters_latest_run_and_other_comparisons(walk_a):
    later = records_of("regblock", [metrics_for(duration=1e6, lsu_pipe_pct=50.0, fma_pipe_pct=41.0)], run_id="r2")
    steps = ladder_moves(walk_a + later)
    regblock = next(s for s in steps if s["stage"] == "regblock")
    assert regblock["run_id"] == "r2" and regblock["moves"][0]["after"] == 50.0  # the latest profile of the cell
    assert (
        next(s for s in ladder_moves(walk_a + later, run_id="r1") if s["stage"] == "regblock")["moves"][0]["after"]
        == 55.2
    )
    assert ladder_moves(walk_a, family="simt_fp32", shape=(1024, 1024, 1024)) == []
    assert ladder_moves(walk_a, gpu_model="H100") == []
    (vs_cublas,) = stage_moves(walk_a, "bank_pad_vec", "cublas_fp32")
    l2 = next(m for m in vs_cublas["moves"] if m["quantity"] == "l2_hit_pct")
    assert l2["text"] == "L2 hit rate 52.0 -> 82.0% (+30.0 pp)"
    table = moves_table(walk_a, top=2)
    assert len(table) == 10 and list(table.columns[:3]) == ["gpu_model", "gpu_uuid", "family"]


def test_status_rows_and_missing_stages_do_not_make_steps(walk_a, monkeypatch):
    no_ncu(monkeypatch)
    skipped = Profiler(DEVICE).run([Cell("ldg_vec", 2048, 2048, 2048)], "r1")
    steps = ladder_moves(walk_a + skipped)
    assert "ldg_vec" not in {s["stage"] for s in steps}


# --------------------------------------------------------------------------------------- entry points


def test_cli_has_a_profile_command_with_clear_errors(capsys):
    from farm.cli import main

    assert main(["profile", "--sizes", "0"]) == 2
    assert "dimensions must be positive" in capsys.readouterr().err
    out = subprocess.run(
        [sys.executable, "-m", "farm", "profile", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0 and "--ncu" in out.stdout and "--run-id" in out.stdout


def test_profile_command_is_the_sweeps_driver_on_a_local_ray(tmp_path, monkeypatch, caplog):
    """`farm profile` hands its cells to the sweep's dispatcher on a Ray of its own (declaring one GPU here, for the
    stand-in's worker): every cell gets its record, a cell not profiled makes the exit status 1, and a second pass
    with the same run id (the plan's shard mode: on a new Ray the stand-in is another card of its model) has nothing
    left to do."""
    import farm.sweep
    from farm.cli import main

    monkeypatch.setattr(farm.sweep, "LOCAL_RAY", {**farm.sweep.LOCAL_RAY, "num_gpus": 1})
    monkeypatch.setattr("farm.cli._no_gpu", lambda: None)
    monkeypatch.setenv("GEMM_FARM_NCU", "none")  # the local Ray's workers inherit this environment
    plan = tmp_path / "standin.toml"
    plan.write_text('measurer = "standin"\nmode = "shard"\nsizes = [64, "30x30x30"]\nkernels = ["naive"]\n')
    argv = ["profile", "--plan", str(plan), "--run-id", "r-local", "--output", str(tmp_path / "ds")]
    assert main(argv) == 1
    profile = read_table(str(tmp_path / "ds"), PROFILE).to_pylist()
    assert sorted((r["stage"], r["m"], r["status"]) for r in profile) == [
        ("cublas_fp32", 30, "no_ncu"),
        ("cublas_fp32", 64, "no_ncu"),
        ("naive", 30, "no_ncu"),
        ("naive", 64, "no_ncu"),
    ]
    assert not exists(str(tmp_path / "ds"))  # profiling measures nothing: no rows table
    assert "/4] naive 30x30x30 r0  no_ncu  " in caplog.text  # a line per cell, with why
    assert main(argv) == 0 and len(read_table(str(tmp_path / "ds"), PROFILE)) == 4


def test_sweep_has_a_profile_flag():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "farm" / "sweep.py"), "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and "--profile" in proc.stdout


def test_sweep_profile_pass_on_a_ray_cluster_without_ncu(tmp_path):
    """--profile after a stand-in sweep: every worker reports why it could not profile, the driver writes it."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    from farm.sweep import main

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=1, num_gpus=2, labels={"farm.gpu-model": "H200", "standin.gpu-name": "NVIDIA_H200"})
    try:
        ray.init(
            address=c.address,
            log_to_driver=False,
            runtime_env={"working_dir": str(ROOT), "env_vars": {"GEMM_FARM_NCU": "none"}},
        )
        out = tmp_path / "ds"
        rc = main(
            [
                "--kernels",
                "naive",
                "--sizes",
                "64,30x30x30",
                "--repeats",
                "1",
                "--measurer",
                "standin",
                "--output",
                str(out),
                "--run-id",
                "r-prof",
                "--profile",
            ]
        )
        assert rc == 0
        rows = read_table(str(out)).to_pylist()
        profile = read_table(str(out), PROFILE).to_pylist()
        assert len(rows) == 2 * 2 * 2  # (naive, cublas_fp32) x 2 sizes x 2 GPUs
        cells = sorted((r["gpu_uuid"][-1], r["stage"], r["m"], r["status"]) for r in profile)
        assert len(cells) == 8 and {r["status"] for r in profile} == {"no_ncu"}
        assert all(
            "GEMM_FARM_NCU" in r["status_reason"] and r["run_id"] == "r-prof" and r["gpu_model"] == "H200"
            for r in profile
        )
        # a second pass with the same run id has nothing left to do
        assert (
            main(
                [
                    "--kernels",
                    "naive",
                    "--sizes",
                    "64,30x30x30",
                    "--repeats",
                    "1",
                    "--measurer",
                    "standin",
                    "--output",
                    str(out),
                    "--run-id",
                    "r-prof",
                    "--profile",
                ]
            )
            == 0
        )
        assert len(read_table(str(out), PROFILE).to_pylist()) == 8
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.mark.gpu
def test_real_pass_on_this_gpu(tmp_path):
    """On a GPU box: the real ncu pass on naive and its baseline, or one recorded reason per cell."""
    from farm.measure.device import describe_device

    profiler = Profiler(describe_device(0), timeout_s=600)
    records = profiler.run([Cell("naive", 512, 512, 512), Cell("cublas_fp32", 512, 512, 512)], "r-gpu")
    write_table(records, str(tmp_path), PROFILE)
    statuses = {r["status"] for r in records}
    if profiler.ncu is None or statuses & {"no_permission", "ncu_unusable"}:
        assert all(r["quantity"] is None and r["status_reason"] for r in records)
        pytest.skip(f"ncu cannot profile here: {records[0]['status_reason'][:200]}")
    assert "ok" in statuses, records[:2]
    naive = {r["quantity"]: r["value"] for r in records if r["stage"] == "naive" and r["status"] == "ok"}
    assert 0 <= naive["lsu_pipe_pct"] <= 100 and naive["duration"] > 0 and naive["registers"] > 0
    assert {r["kernel"] for r in records if r["stage"] == "naive" and r["status"] == "ok"} == {"sgemm_naive"}
