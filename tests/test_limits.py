"""The physical limits (farm/data/limits.py): a timed row faster than its chip can go is `implausible`, never `ok`,
and validate, report and dashboard treat it so. CPU only."""

from __future__ import annotations

import pytest

from farm.cells import Cell
from farm.data import limits, peak
from farm.data.dataset import write_rows
from farm.data.rows import cell_row
from kernels.registry import stage_named

H100 = {
    "gpu_name": "NVIDIA H100 80GB HBM3",
    "gpu_model": "H100-80GB-HBM3",
    "arch": "sm_90",
    "compute_capability": "9.0",
    "sm_count": 132,
    "max_sm_clock_mhz": 1980.0,
    "memory_bandwidth_tbs": 3.35,
}
RTX3050_LAPTOP = {
    "gpu_name": "NVIDIA GeForce RTX 3050 Laptop GPU",
    "gpu_model": "GeForce-RTX-3050-Laptop-GPU",
    "arch": "sm_86",
    "compute_capability": "8.6",
    "sm_count": 16,
    "max_sm_clock_mhz": 1740.0,
    "memory_bandwidth_tbs": 0.192,
}


def timed(device: dict, dtype: str, size: int, tflops: float, mode: str = "hot") -> dict:
    flops = 2 * size**3
    return {
        **device,
        "dtype": dtype,
        "m": size,
        "n": size,
        "k": size,
        "flops": flops,
        "timing_mode": mode,
        "median_ms": flops / (tflops * 1e9),
    }


@pytest.mark.parametrize("dtype, peak", [("fp32", 66.9), ("tf32", 535.3), ("fp16", 1070.5), ("bf16", 1070.5)])
def test_throughput_above_the_dense_peak_at_max_clock_is_implausible_per_precision(dtype, peak):
    assert limits.check(timed(H100, dtype, 1024, 0.9 * peak)) == (None, "peak")
    assert limits.check(timed(H100, dtype, 1024, 1.04 * peak))[0] is None  # within the stated margin
    reason, checked = limits.check(timed(H100, dtype, 1024, 1.2 * peak))
    assert (
        checked == "peak" and f"dense {dtype} peak of {peak:.1f} TFLOPS" in reason and "132 SMs at 1980 MHz" in reason
    )


def test_the_issue_s_case_200_tflops_fp32_on_an_h100():
    reason, _ = limits.check(timed(H100, "fp32", 1024, 200.0))
    assert reason and "66.9" in reason


def test_geforce_boards_get_their_halved_tensor_rate():
    # GA102 GeForce: FP16 with FP32 accumulate at half the professional rate: 512 FLOP/clk/SM.
    peak = 512 * 16 * 1740e6 / 1e12
    assert limits.check(timed(RTX3050_LAPTOP, "fp16", 1024, 0.95 * peak))[0] is None
    assert limits.check(timed(RTX3050_LAPTOP, "fp16", 1024, 1.2 * peak))[0]


def test_cold_mode_below_the_dram_floor_is_implausible():
    size = 4096  # FP16 A and B: 64 MiB, 20 us at 3.35 TB/s
    floor_ms = peak.operand_bytes(size, size, size, "fp16") / 3.35e12 * 1e3
    row = {**timed(H100, "fp16", size, 500.0, mode="cold")}
    assert limits.check(row) == (None, "peak+dram")
    row["median_ms"], row["flops"] = floor_ms * 0.5, 1  # a tiny FLOP count keeps the peak out of it
    reason, checked = limits.check(row)
    assert checked == "peak+dram" and "reading A and B once from DRAM" in reason
    assert limits.check({**row, "timing_mode": "hot"})[0] is None  # hot mode: operands may sit in L2


def test_unknown_limits_are_said_never_passed_silently():
    _, checked = limits.check(timed({**H100, "arch": "sm_60", "compute_capability": "6.0"}, "fp32", 1024, 1.0))
    assert checked.startswith("not checked: no dense peak for sm_60")
    _, checked = limits.check(timed({**H100, "max_sm_clock_mhz": None}, "bf16", 1024, 1.0))
    assert "not checked" in checked
    _, checked = limits.check(
        timed({**H100, "memory_bandwidth_tbs": None, "gpu_name": "NVIDIA Unknown"}, "bf16", 1024, 1.0, "cold")
    )
    assert checked == "peak; not checked: no memory bandwidth for the cold-mode DRAM floor"


def test_an_architecture_without_its_own_entry_takes_its_family_s_highest_rate():
    # sm_87 (Orin) is not in the table: the highest sm_8x rate bounds it from above.
    assert limits.check(timed({**H100, "arch": "sm_87", "compute_capability": "8.7"}, "bf16", 1024, 1.0)) == (
        None,
        "peak",
    )


def _row(stage: str, status: str, tflops: float, **kw) -> dict:
    s = stage_named(stage)
    row = cell_row({**H100, "gpu_uuid": "GPU-1", "host": "h"}, s, Cell(stage, 1024, 1024, 1024), "r1", status)
    ms = row["flops"] / (tflops * 1e9)
    row.update(
        median_ms=ms,
        min_ms=ms,
        max_ms=ms,
        q1_ms=ms,
        q3_ms=ms,
        iqr_ms=0.0,
        samples_ms=[ms],
        tflops=tflops,
        baseline_median_ms=ms,
        pct_of_baseline=100.0,
        verified=status == "ok",
        timing_mode="hot",
        launch_method="cuda_graph",
        baseline_launch_method="cuda_graph",
        post_checked=True,
        **kw,
    )
    return row


def test_validate_fails_an_ok_row_beyond_a_limit_and_accepts_it_as_implausible(tmp_path):
    from farm.data.validate import validate

    write_rows([_row("cublas_fp32", "ok", 50.0), _row("naive", "ok", 200.0)], str(tmp_path / "bad"))
    problems = validate(str(tmp_path / "bad"))
    assert len(problems) == 1 and "naive" in problems[0] and "beyond a physical limit" in problems[0], problems
    reason, _ = limits.check(_row("naive", "ok", 200.0))
    write_rows(
        [_row("cublas_fp32", "ok", 50.0), _row("naive", "implausible", 200.0, status_reason=reason)],
        str(tmp_path / "good"),
    )
    assert validate(str(tmp_path / "good")) == []


def test_report_never_shows_an_implausible_row_as_a_result(tmp_path):
    from farm.analysis.report import headline_table, ladder_table

    reason, _ = limits.check(_row("naive", "ok", 200.0))
    write_rows(
        [_row("cublas_fp32", "ok", 50.0), _row("naive", "implausible", 200.0, status_reason=reason)], str(tmp_path)
    )
    ladder = ladder_table(str(tmp_path))
    [naive] = [line for line in ladder.splitlines() if line.startswith("| naive")]
    assert "implausible: 200.0 TFLOPS is above the dense fp32 peak" in naive and naive.split("|")[3].strip() == "", (
        naive
    )  # no time shown
    assert "naive" not in headline_table(str(tmp_path))


def test_dashboard_keeps_implausible_rows_out_of_every_result(tmp_path, monkeypatch):
    pytest.importorskip("streamlit")
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from dashboard import data, frames

    reason, _ = limits.check(_row("naive", "ok", 200.0))
    write_rows(
        [_row("cublas_fp32", "ok", 50.0), _row("naive", "implausible", 200.0, status_reason=reason)], str(tmp_path)
    )
    loaded = data.load_uncached([str(tmp_path)])
    assert list(frames.timed(loaded.rows)["stage"]) == ["cublas_fp32"]
    monkeypatch.setenv(data.ENV, str(tmp_path))
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "dashboard" / "app.py"), default_timeout=60)
    at.run()
    for page in ("overview", "ladder", "peak", "reproducibility"):
        at.switch_page(f"views/{page}.py").run()
        assert not at.exception, (page, [e.message for e in at.exception])
        specs = " ".join(c.proto.spec for c in at.get("vega_lite_chart"))
        assert "200.0" not in specs and '"naive"' not in specs.replace('"stage":"naive","status":"implausible"', ""), (
            page
        )
