""".ci/step_tables.py, the tables a walk step prints about its own run, on runs cut short as the steps' DEADLINE cuts them."""

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


def test_a_run_stopped_before_the_librarys_own_cells_takes_its_time_beside_each_kernel(tmp_path):
    # 2026-11-27, run h200-d19llm: stopped at its DEADLINE before any cuBLASLt cell, the step's tables died (KeyError)
    rows = [_row("d_half_tiles_bf16", m, 0.02, 0.018) for m in (128, 1024)]
    write_rows([*rows, _row("d_lean_k_loop_bf16", 128, 0.018, 0.018)], str(tmp_path))
    done = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "step_tables.py"), "bench", str(tmp_path), "cut", "--best", "b=half_tiles"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    per_repeat = done.stdout.split("median us")[0]
    assert "cublas_us" in per_repeat and per_repeat.count("18.0") == 2  # the interleaved baseline's 18 us, both cells
    assert "lean_k_loop" in done.stdout and "100.0" in done.stdout
