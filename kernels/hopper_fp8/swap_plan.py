"""Stage 07's plan (f_swap_plan_fp8), made per shape on the host: the kernel's TN, BNT and SLICES.

Up to 128 tokens the product is swapped (C^T = B^T A^T, common/swapped.cuh) into TN x BNT tiles, K in SLICES.
Candidates are costed as 06's `plan_cost` (06_swap_ab_fp8.cu), in k-tile times a block: waves x (k tiles a unit +
fix-up) x (BNT + TN + 32), 32: a k tile's fixed costs. 07's fix-up is two (fences, count, the last slice's loads'
round trip, issued together) plus the (1 + slices) x TN x BNT FP32 partials moved through L2 at 4x the rate of a k
tile's (TN + BNT) x 128 FP8 bytes from DRAM. Cheapest wins (ties: wider tile, then fewer slices). `swapped_plan` also
plans walk D's 13 (kernels/hopper_d/swap_plan.py), whose 16-bit k tiles are 64 deep but move the same 128-byte rows.
Above 128 tokens TN is 0: 05's split-K pipeline (`split_k_slices`). Swap partials are in accumulator order.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.stage import LaunchPlan, cdiv

BK = 128  # FP8 elements of K a k tile
ROW_BYTES = 128  # bytes a k-tile row, any operand/precision (common/swapped.cuh)
TOKENS = (16, 64, 128)  # wgmma N choices, fewest first
WIDTHS = (128, 64)  # features a tile, widest (preferred on ties) first
MAX_SLICES = 8  # swapped::MAX_SLICES (bounds fix-up registers, 05's workspace planes)
WARPS = 8  # consumer warps a tile, an arrival counter each
SPLIT_TILES = 8 * 1024 // WARPS  # sliceable tiles: arrival counters (split_k_fp8::ARRIVALS) / WARPS
TILE_M, TILE_N = 128, 256  # 05's tile, above 128 tokens


@dataclass(frozen=True)
class Plan:
    """`tn` tokens (0: 05's tiles) x `bnt` features a tile, K in `slices`; `cost`: k-tile times a block (0: 05's)."""

    tn: int
    bnt: int
    slices: int
    cost: int

    def workspace_floats(self, m: int, n: int) -> int:
        if self.slices == 1:
            return 0
        if self.tn == 0:
            return self.slices * m * n
        return self.slices * cdiv(n, self.bnt) * WARPS * 16 * self.tn  # a warp's partial: 32 lanes x tn / 2 floats


def tokens(m: int) -> int:
    """wgmma's N for m tokens, or 0 above the swap's range."""
    return next((t for t in TOKENS if m <= t), 0)


def swap_cost(m: int, n: int, k: int, blocks: int, bnt: int, slices: int, bk: int = BK) -> int | None:
    """Swapped plan's cost in k-tile times a block (k tiles `bk` deep); None where it may not run."""
    tn, tiles, kt = tokens(m), cdiv(n, bnt), cdiv(k, bk)
    if slices > kt or (slices > 1 and (tiles >= blocks or tiles > SPLIT_TILES)):
        return None
    fixup = 0 if slices == 1 else 2 + cdiv((1 + slices) * tn * bnt * 4, 4 * (tn + bnt) * ROW_BYTES)
    return cdiv(tiles * slices, blocks) * (cdiv(kt, slices) + fixup) * (bnt + tn + 32)


def split_k_slices(m: int, n: int, k: int, blocks: int) -> int:
    """05's K slices for 128 x 256 tiles (split_k_fp8.cuh's slices_for with max_splits = MAX_SLICES)."""
    tiles = cdiv(m, TILE_M) * cdiv(n, TILE_N)
    if tiles >= blocks or tiles > SPLIT_TILES:
        return 1
    return max(1, min(MAX_SLICES, cdiv(k, BK), blocks // tiles))


def plan(m: int, n: int, k: int, blocks: int) -> Plan:
    """The plan for an m x n x k product on `blocks` persistent blocks."""
    if tokens(m) == 0:
        return Plan(0, TILE_N, split_k_slices(m, n, k, blocks), 0)
    return swapped_plan(m, n, k, blocks, BK)


def swapped_plan(m: int, n: int, k: int, blocks: int, bk: int) -> Plan:
    """Cheapest swapped plan for m <= 128 tokens, k tiles `bk` deep."""
    found = [
        Plan(tokens(m), bnt, s, c)
        for bnt in WIDTHS
        for s in range(1, MAX_SLICES + 1)
        if (c := swap_cost(m, n, k, blocks, bnt, s, bk)) is not None
    ]
    return min(found, key=lambda p: p.cost)  # min keeps the first of equals; (128, 1) always runs


def launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """f_swap_plan_fp8's launch args and workspace (kernels.stage.Launch.planner)."""
    p = plan(m, n, k, blocks)
    return LaunchPlan({"TN": p.tn, "BNT": p.bnt, "SLICES": p.slices}, p.workspace_floats(m, n))
