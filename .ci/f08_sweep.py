"""Walk F 08's plan sweep (issue 32): every candidate plan of kernels/hopper_fp8/tile_plan.py (and 128-row tiles at 128
tokens, which its plan does not offer) at the small-work LLM shapes, each cell verified (C poisoned) and timed with
cuBLASLt FP8 interleaved, the plan forced by replacing tile_plan.plan. 07 once a shape beside them. One CSV line a
cell; the plan's choice marked. Run on the device from the repo root:
    python3 .ci/f08_sweep.py [MxNxK ...]
"""

import sys
import time

from farm.cells import Cell
from farm.measure.cell_timer import MeasureOptions
from farm.measure.gpu import GpuMeasurer
from farm.measure.stopping import StoppingRule, WarmupRule
from farm.measure.timing import TimingConfig
from kernels.hopper_fp8 import swap_plan, tile_plan

SHAPES = [  # lowest first
    (1024, 512, 3584),
    (1024, 1024, 4096),
    (1024, 1024, 8192),
    (128, 4096, 4096),
    (128, 512, 3584),
    (128, 1024, 4096),
    (128, 3584, 3584),
    (128, 4096, 14336),
    (128, 8192, 8192),
    (128, 1024, 8192),
    (1024, 14336, 4096),
    (1024, 3584, 18944),
]
SLICES = (1, 2, 3, 4, 5, 6, 7, 8)
OPTIONS = MeasureOptions(
    timing=TimingConfig(
        target_batch_ms=1,
        warmup=WarmupRule(min_s=0.01, max_s=0.1),
        stopping=StoppingRule(min_samples=5, min_time_s=0.0, max_time_s=0.15, target_noise=0.01),
    )
)


def plans(m: int, n: int, k: int, blocks: int) -> list[tile_plan.Plan]:
    chosen = tile_plan.plan(m, n, k, blocks)
    found = [p for p in tile_plan.candidates(m, n, k, blocks) if p == chosen or _tried(p, m, n, blocks)]
    if m <= 128:  # 07's swapped candidates, and 128-row tiles
        found = [chosen] + [
            tile_plan.Plan(swap_plan.tokens(m), bnt, s, c)
            for bnt in swap_plan.WIDTHS
            for s in SLICES
            if (c := swap_plan.swap_cost(m, n, k, blocks, bnt, s)) is not None
            and (bnt, s) != (chosen.bn, chosen.slices)
            and _tried(tile_plan.Plan(swap_plan.tokens(m), bnt, s, c), m, n, blocks)
        ]
        found += [
            p
            for p in tile_plan.candidates(m, n, k, blocks)
            if (p.bn, p.slices) in ((256, 4), (256, 8), (128, 2), (128, 4), (128, 8))
        ]
    return found


def _tried(p: tile_plan.Plan, m: int, n: int, blocks: int) -> bool:
    """Slices worth a cell: whole K only where the tiles alone give every other block work."""
    return p.slices in SLICES and (p.slices > 1 or 2 * p.tiles(m, n) >= blocks)


def main() -> None:
    shapes = [tuple(int(x) for x in a.split("x")) for a in sys.argv[1:]] or SHAPES
    measurer = GpuMeasurer(options=OPTIONS)
    blocks = measurer.device_info()["sm_count"]
    chosen_plan = tile_plan.plan
    print("gpu", measurer.device_info().get("name"), "sms", blocks, flush=True)
    print("m,n,k,stage,tn,bn,slices,chosen,status,us,cublaslt_us,pct", flush=True)
    for m, n, k in shapes:
        chosen = chosen_plan(m, n, k, blocks)
        row = measurer.measure(Cell("f_swap_plan_fp8", m, n, k), "f08sweep")
        print(f"{m},{n},{k},07,,,,,{row['status']},{_us(row)},{_base_us(row)},{row.get('pct_of_baseline')}", flush=True)
        for p in plans(m, n, k, blocks):
            tile_plan.plan = lambda *_, p=p: p
            t0 = time.perf_counter()
            try:
                row = measurer.measure(Cell("f_tile_plan_fp8", m, n, k), "f08sweep")
            finally:
                tile_plan.plan = chosen_plan
            print(
                f"{m},{n},{k},08,{p.tn},{p.bn},{p.slices},{int(p == chosen)},{row['status']},{_us(row)},{_base_us(row)},"
                f"{row.get('pct_of_baseline')}  # {time.perf_counter() - t0:.1f}s {row.get('status_reason') or ''}"[
                    :300
                ],
                flush=True,
            )


def _us(row: dict) -> str:
    ms = row.get("median_ms")
    return "" if ms is None else f"{ms * 1e3:.2f}"


def _base_us(row: dict) -> str:
    ms, pct = row.get("median_ms"), row.get("pct_of_baseline")
    return "" if ms is None or not pct else f"{ms * pct / 100 * 1e3:.2f}"


if __name__ == "__main__":
    main()
