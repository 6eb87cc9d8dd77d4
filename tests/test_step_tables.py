""".ci/step_tables.py, the tables a walk step prints about its own run, on a run cut short as a step's DEADLINE cuts it."""

import subprocess
import sys
from pathlib import Path

from farm.cells import Cell
from farm.data.dataset import write_rows
from farm.data.rows import cell_row
from kernels.registry import stage_named

ROOT = Path(__file__).resolve().parents[1]
DEVICE = {"host": "h", "gpu_name": "NVIDIA H200", "gpu_model": "H200", "gpu_uuid": "GPU-1", "gpu_index": 0}
DEVICE |= {"compute_capability": "9.0", "arch": "sm_90a", "sm_count": 132}


def _row(stage: str, m: int, median_ms: float, baseline_ms: float) -> dict:
    row = cell_row(DEVICE, stage_named(stage), Cell(stage, m, 4096, 4096, 0), "cut", "ok")
    pct = 100 * baseline_ms / median_ms
    timing = {"median_ms": median_ms, "baseline_median_ms": baseline_ms, "pct_of_baseline": pct, "verified": True}
    return row | timing | {"energy_per_launch_mj": 1.0, "sm_clock_median_mhz": 1980.0}


def test_a_cut_run_takes_the_librarys_time_beside_each_kernel_and_compares_kernels_at_the_same_cells(tmp_path):
    # 2026-11-27, run h200-d19llm: stopped at its DEADLINE before any cuBLASLt cell, the step's tables died (KeyError);
    # its means would have put 17 at 38 cells beside 19 at 37
    rows = [_row("d_half_tiles_bf16", 128, 0.02, 0.018), _row("d_half_tiles_bf16", 1024, 0.009, 0.018)]
    write_rows([*rows, _row("d_lean_k_loop_bf16", 128, 0.018, 0.018)], str(tmp_path))
    script = [sys.executable, str(ROOT / ".ci" / "step_tables.py")]
    done = subprocess.run(
        [*script, "bench", str(tmp_path), "cut", "--best", "b=half_tiles,lean_k_loop"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    per_repeat = done.stdout.split("median us")[0]
    assert "cublas_us" in per_repeat and per_repeat.count("18.0") == 2  # the interleaved baseline's 18 us, both cells
    means = done.stdout.split("geometric mean")[1]  # at the one cell both ran (17 90 %, 19 100), not 17's two (134)
    assert "at the 1 cells every kernel ran" in means and means.count("90.0") == 2 and "134" not in means
