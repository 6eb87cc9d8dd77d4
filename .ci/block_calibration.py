"""How long a block must be at the power cap (.ci/gpu-session.sh blocks; docs/verdicts.md "At the power cap").

One GPU, one worker process: cuBLAS BF16 timed alone, then walk D 12 (draws more than cuBLAS), 01 wgmma (mid) and
walk C's WMMA naive (frugal) with cuBLAS in the cell, at 4096^3 and 8192^3, timed batch by batch, in blocks of
0.1 to 2 s, and as the default decides (cap_block_s). Every cell verified as in a sweep. Prints one line a cell and
writes them to OUTDIR/blocks.csv: the % of cuBLAS in the cell, the % against the cuBLAS timed alone just before,
each series' median SM clock and mean power, the stop reason.
    python .ci/block_calibration.py OUTDIR [SIZES]
"""

import csv
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: farm, kernels

from farm.cells import Cell
from farm.measure.cell_timer import MeasureOptions
from farm.measure.gpu import GpuMeasurer
from farm.measure.stopping import StoppingRule
from farm.measure.timing import TimingConfig

KERNELS = ["d_tma_store_bf16", "d_wgmma_bf16", "h_wmma_naive_bf16"]
BLOCKS = [None, 0.0, 0.1, 0.25, 0.5, 1.0, 2.0]  # None: the default (blocks of cap_block_s where warm-up sees the cap)
out = Path(sys.argv[1])
sizes = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "4096,8192").split(",")]
base = MeasureOptions(timing=TimingConfig(stopping=StoppingRule(max_time_s=10.0)))
meas = GpuMeasurer(base, prewarm=tuple(KERNELS))


def timed(stage: str, size: int, block_s: float | None) -> dict:
    timing = base.timing if block_s is None else dataclasses.replace(base.timing, block_s=block_s, cap_block_s=0.0)
    meas._timer.options = dataclasses.replace(base, timing=timing)
    t0 = time.perf_counter()
    row = meas.measure(Cell(stage, size, size, size), "blocks")
    return {**row, "wall_s": time.perf_counter() - t0}


lines = []
for size in sizes:
    for kernel in KERNELS:
        alone = timed("cublas_bf16", size, None)
        for block_s in BLOCKS:
            row = timed(kernel, size, block_s)
            line = {
                "size": size,
                "stage": kernel,
                "block_s": "default" if block_s is None else block_s,
                "status": row["status"],
                "pct_in_cell": round(row.get("pct_of_baseline") or 0, 2),
                "pct_of_alone": round(100 * alone["median_ms"] / row["median_ms"], 2) if row.get("median_ms") else None,
                "partner_shift_pct": round(100 * (row["baseline_median_ms"] / alone["median_ms"] - 1), 2)
                if row.get("baseline_median_ms")
                else None,
                "median_ms": row.get("median_ms"),
                "baseline_ms": row.get("baseline_median_ms"),
                "alone_ms": alone.get("median_ms"),
                "sm_mhz": row.get("sm_clock_median_mhz"),
                "alone_sm_mhz": alone.get("sm_clock_median_mhz"),
                "power_w": row.get("power_mean_w"),
                "alone_power_w": alone.get("power_mean_w"),
                "batches": row.get("batches"),
                "stop_reason": row.get("stop_reason"),
                "wall_s": round(row["wall_s"], 1),
            }
            lines.append(line)
            print(" ".join(f"{k}={v}" for k, v in line.items()), flush=True)
out.mkdir(parents=True, exist_ok=True)
with open(out / "blocks.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(lines[0]))
    w.writeheader()
    w.writerows(lines)
