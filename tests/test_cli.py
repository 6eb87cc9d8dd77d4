"""Bad input to the CLI: one clear error and exit status 2, before any GPU work."""

import subprocess
import sys
from pathlib import Path

import pytest

from farm.cli import main


@pytest.mark.parametrize(
    "argv, message",
    [
        (["bench", "--sizes", "0"], "dimensions must be positive"),
        (["bench", "--sizes", "-5"], "dimensions must be positive"),
        (["bench", "--sizes", "12.5"], "'12.5' is not an integer"),
        (["bench", "--sizes", "128x64"], "three dimensions"),
        (
            ["bench", "--kernels", "naive,warp_rebalanced", "--sizes", "128"],
            "unknown kernel warp_rebalanced; valid: cublas_fp32, cublas_tf32",
        ),
        (["bench", "--repeats", "0", "--sizes", "128"], "repeats: Input should be greater than or equal to 1, got 0"),
        (["compile", "--arch", "sm_30"], "cannot compile for sm_30"),
        (["catalog", "--families", "simt"], "unknown family simt"),
    ],
)
def test_bad_input_is_one_clear_error(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def _subcommands():
    from farm.cli import build_parser

    action = next(a for a in build_parser()._subparsers._group_actions if a.choices)
    return sorted(action.choices)


@pytest.mark.parametrize("argv", [["--help"]] + [[name, "--help"] for name in _subcommands()])
def test_every_help_text_renders(argv, capsys):
    # argparse formats help strings with %: a stray one crashes --help, which no other test reaches; descriptions
    # it prints as written, so a %% there shows doubled
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "usage:" in out and "%%" not in out


def test_sweep_help_renders():
    out = subprocess.run([sys.executable, "farm/sweep.py", "--help"], capture_output=True, text=True, check=True)
    assert "--plan" in out.stdout


def test_module_entry_point_runs():
    out = subprocess.run(
        [sys.executable, "-m", "farm", "catalog", "--json"], capture_output=True, text=True, check=True
    )
    assert '"name": "naive"' in out.stdout


def test_bench_is_the_sweep_on_a_local_ray_and_resumes_a_run_on_another_card_of_the_model(
    tmp_path, monkeypatch, caplog
):
    """farm bench runs the sweep's driver on a Ray of its own (here declaring one GPU, for the stand-in), in shard
    mode: a second bench, on a new Ray and so another card of the model, measures only the cells the run lacks."""
    import farm.sweep
    from farm.data.dataset import read_table

    monkeypatch.setattr(farm.sweep, "LOCAL_RAY", {**farm.sweep.LOCAL_RAY, "num_gpus": 1})
    monkeypatch.setattr("farm.cli._no_gpu", lambda: None)
    plan = tmp_path / "standin.toml"
    plan.write_text('measurer = "standin"\nsizes = [8]\n')
    out = tmp_path / "ds"
    bench = ["bench", "--plan", str(plan), "--kernels", "naive", "--run-id", "r1", "--output", str(out)]
    assert main([*bench, "--sizes", "128,256"]) == 0
    first = read_table(str(out)).to_pylist()
    assert len(first) == 4 and {r["status"] for r in first} == {"ok"}  # naive and cublas_fp32 at two sizes
    assert main([*bench, "--sizes", "128,256,512"]) == 0
    rows = read_table(str(out)).to_pylist()
    second = [r for r in rows if r["gpu_uuid"] != first[0]["gpu_uuid"]]
    assert len(rows) == 6 and sorted((r["stage"], r["m"]) for r in second) == [("cublas_fp32", 512), ("naive", 512)]
    assert {r["gpu_model"] for r in rows} == {"Standin-GPU"}
    assert "already done before this run (resumed): 4" in caplog.text
    assert "/2] naive 512x512x512 r0  ok  " in caplog.text  # a line per cell as it finishes


def test_sweep_is_a_subcommand_with_the_scripts_flags(capsys):
    with pytest.raises(SystemExit) as done:
        main(["sweep", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m farm sweep") and "--max-gpu-hours" in out and "--profile" in out
    assert main(["sweep", "--sizes", "0", "--output", "/nonexistent-never-made"]) == 2  # a plan error, before Ray


def test_report_headline_picks_the_stage_closest_to_cublas(tmp_path, capsys):
    from farm.cells import Cell
    from farm.data.dataset import write_rows
    from farm.data.rows import cell_row
    from kernels.registry import stage_named

    device = {
        "host": "h",
        "gpu_name": "NVIDIA H200",
        "gpu_model": "H200",
        "gpu_uuid": "GPU-1",
        "gpu_index": 0,
        "compute_capability": "9.0",
        "arch": "sm_90",
        "sm_count": 132,
    }

    def row(stage, repeat, ms, pct, status="ok", verified=True):
        r = cell_row(device, stage_named(stage), Cell(stage, 1024, 1024, 1024, repeat), "run", status)
        return {
            **r,
            "verified": verified,
            "median_ms": ms,
            "pct_of_baseline": pct,
            "timing_mode": "hot",
            "max_sm_clock_mhz": 1980.0,
            "post_checked": True,
        }

    write_rows(
        [
            row("tiled", 0, 2.0, 40.0),
            row("tiled", 1, 2.2, 36.0),
            row("multibuf", 0, 1.0, 80.0),
            row("multibuf", 1, 1.1, 78.0),
            row("multibuf", 2, 1.05, 79.0),
            row("splitk", 0, 0.5, 99.0, status="failed_verification", verified=False),  # never the headline
            row("cublas_fp32", 0, 0.8, 100.0),
            row("c_naive", 0, 9.0, 9.0),
        ],
        str(tmp_path),
    )
    assert main(["report", str(tmp_path), "--headline"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4  # header, rule, one line per family: simt_fp32, simt_fp32_c
    best = next(line for line in lines if "| simt_fp32 |" in line).split(" | ")
    # % of cuBLAS alone and % of vendor best: the cublas_fp32 row's own 0.8 ms against multibuf's 1.0, 1.1 and 1.05 ms.
    tflops = 2 * 1024**3 / 1.05 / 1e9
    peak = 256 * 132 * 1980e6 / 1e12  # sm_90 FP32: 128 FFMA lanes per SM x 2 FLOP
    assert best[3:] == [
        "multibuf",
        "1.0500",
        f"{tflops:.1f}",
        "79.0 of cublas_fp32",
        "76.2",
        "76.2",
        f"{100 * tflops / peak:.1f}",
        "9.52%",
        "3 |",
    ]


def test_report_on_a_missing_dataset_or_run_exits_non_zero(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert "no dataset at" in capsys.readouterr().err
    shipped = str(Path(__file__).resolve().parent.parent / "datasets" / "h100-reference")
    assert main(["report", shipped, "--run-id", "no-such-run"]) == 2
    assert "no rows for run no-such-run" in capsys.readouterr().err


SHIPPED = Path(__file__).resolve().parent.parent / "datasets"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["report", "{missing}"], "no dataset at {missing}"),
        (["compare", "a", "b", "--data", "{missing}"], "no dataset at {missing}"),
        (
            ["compare", "aa1", "aa2", "--data", str(SHIPPED / "h100-aa"), "--data-b", "{missing}"],
            "no dataset at {missing}",
        ),
        (
            ["compare", "aa1", "--aa", "--data", str(SHIPPED / "h100-aa"), "--history", "{missing}"],
            "no dataset at {missing}",
        ),
        (["compact", "{missing}"], "no dataset at {missing}"),
        (["dashboard", "--data", "{missing}"], "--data {missing}: no such dataset or folder"),
    ],
)
def test_every_subcommand_that_reads_a_dataset_exits_2_on_a_missing_one(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("os.execv", lambda *a: pytest.fail("the dashboard started"))
    missing = str(tmp_path / "nothing")
    assert main([a.format(missing=missing) for a in argv]) == 2
    assert message.format(missing=missing) in capsys.readouterr().err


def test_validate_counts_a_missing_dataset_as_a_problem(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nothing")]) == 1
    assert "no 'rows' table" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["compare", "aa1", "aa2", "--aa"], "--aa compares within RUN_A alone: RUN_B would be ignored"),
        (
            ["compare", "aa1", "--gpu-to-gpu", "--data-b", "x", "--equal-clocks"],
            "--gpu-to-gpu compares within RUN_A alone: --data-b, --equal-clocks would be ignored",
        ),
        (["compare", "aa1", "--aa", "--plant", "1,2"], "--plant would be ignored"),
        (["compare", "aa1", "--aa", "--gpu-to-gpu"], "two comparisons: give one"),
        (["compare", "aa1,aa2", "--aa"], "--aa and --gpu-to-gpu take one run"),
        (["compare", "aa1", "aa2", "--plant", "1", "--equal-clocks"], "--equal-clocks would be ignored"),
        (["compare", "aa1"], "give two runs, or one run with --aa or --gpu-to-gpu"),
        (["compile", "--families", "baseline"], "nothing to compile"),
        (["compile", "--kernels", "naive", "--tuning"], "none of the selected kernels is tunable"),
        (["crosscheck", "--sizes", "256", "--modes", "hot,warm"], "unknown mode warm; valid: hot, cold"),
        (["crosscheck", "--sizes", "256", "--precisions", "fp8"], "unknown precision fp8"),
        (["crosscheck", "--stages", "cublas_bf16"], "--stages takes the catalog's kernels (not cublas_bf16)"),
        (["crosscheck", "--stages", "d_tall_tiles_bf16", "--modes", "hot"], "--precisions and --modes do not apply"),
    ],
)
def test_options_a_mode_would_ignore_are_refused(argv, message, capsys):
    assert main(argv) == 2  # before any dataset is read: these name none that exists
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["crosscheck", "--plan", "quick", "--sizes", "256"], "not allowed with argument"),
        (["crosscheck", "--max-time-s", "0"], "--max-time-s: 0 is not above 0"),
        (["compare", "a", "b", "--tolerance", "0"], "--tolerance: 0 is not above 0"),
        (["compare", "a", "b", "--tolerance", "x"], "--tolerance: 'x' is not a number"),
        (["validate", "x", "--max-problems", "-1"], "--max-problems: -1 is below 0"),
        (["compact", "x", "--telemetry-stride", "0"], "--telemetry-stride: 0 is below 1"),
        (["simulate", "--gpus", "0"], "--gpus: 0 is below 1"),
        (["simulate", "--cells", "1.5"], "--cells: '1.5' is not an integer"),
        (["simulate", "--cell-ms", "-1"], "--cell-ms: -1 is below 0.0"),
        (["simulate", "--flush-every", "0"], "--flush-every: 0 is not above 0"),
        (["dashboard", "--port", "0"], "--port: 0 is below 1"),
    ],
)
def test_numbers_out_of_range_are_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    assert message in capsys.readouterr().err


def test_the_dashboard_without_its_extra_says_which(monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "streamlit" else real(name, *a))
    monkeypatch.setattr("os.execv", lambda *a: pytest.fail("the dashboard started"))
    assert main(["dashboard"]) == 2
    assert 'pip install "gemm-farm[dashboard]"' in capsys.readouterr().err
    monkeypatch.setattr(importlib.util, "find_spec", real)
    assert main(["dashboard", "--port", "70000"]) == 2
    assert "ports end at 65535" in capsys.readouterr().err
