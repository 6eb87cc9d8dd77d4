"""Stage 08's plan (f_tile_plan_fp8), made once per shape on the host and passed to the kernel as TN, BNT and SLICES.

Up to 128 tokens it is 07's plan (kernels/hopper_fp8/swap_plan.py: the product swapped, TN = 16, 64 or 128 tokens as
wgmma's N, BNT = 128 or 64 features a tile, K in 1 to 8 slices). Above, where 07 ran 05's 128 x 256 tiles with as many
K slices as idle blocks, TN is 0 and a tile is 128 rows of C by BNT = 256 or 128 columns, K in 1 to 8 slices, costed as
07's swapped candidates are (swap_plan.py's model with 128 rows in place of the tokens): waves x (k tiles a unit +
fix-up) x (128 + BNT + 32) a k tile, the fix-up 2 plus the partials moved through L2, (1 + slices) x 128 x BNT FP32
values at four times the rate of a k tile's (128 + BNT) x 128 FP8 bytes from DRAM. The cheapest wins; ties to the wider
tile, then to fewer slices. The workspace holds every slice's partial in the accumulators' order (slices x tiles x 8
consumer warps x 32 lanes x a lane's accumulators, BNT / 2 in 128-row tiles), none where K is whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.hopper_fp8.swap_plan import BK, MAX_SLICES, ROW_BYTES, SPLIT_TILES, WARPS, swapped_plan, tokens
from kernels.stage import LaunchPlan, cdiv

TILE_ROWS = 128  # rows of C a tile above 128 tokens
TILE_WIDTHS = (256, 128)  # its columns, widest first (the preferred on a tie)


@dataclass(frozen=True)
class Plan:
    """Tiles of `tn` tokens by `bn` features (swapped), or (tn = 0) 128 rows by `bn` columns; K in `slices`; at `cost`
    estimated k-tile times a block."""

    tn: int
    bn: int
    slices: int
    cost: int

    def tiles(self, m: int, n: int) -> int:
        return cdiv(n, self.bn) * (1 if self.tn else cdiv(m, TILE_ROWS))

    def workspace_floats(self, m: int, n: int) -> int:
        if self.slices == 1:
            return 0
        lane_floats = (self.tn or self.bn) // 2  # a lane's accumulators: TN / 2 swapped, BNT / 2 in 128-row tiles
        return self.slices * self.tiles(m, n) * WARPS * 32 * lane_floats


def tile_cost(m: int, n: int, k: int, blocks: int, bn: int, slices: int) -> int | None:
    """Estimated k-tile times a block of 128 x bn tiles with K in `slices`, or None where it may not run."""
    tiles, kt = cdiv(m, TILE_ROWS) * cdiv(n, bn), cdiv(k, BK)
    if slices > kt or (slices > 1 and (tiles >= blocks or tiles > SPLIT_TILES)):
        return None
    rows = TILE_ROWS + bn
    fixup = 0 if slices == 1 else 2 + cdiv((1 + slices) * TILE_ROWS * bn * 4, 4 * rows * ROW_BYTES)
    return cdiv(tiles * slices, blocks) * (cdiv(kt, slices) + fixup) * (rows + 32)


def candidates(m: int, n: int, k: int, blocks: int) -> list[Plan]:
    """Every 128-row-tile plan that may run for an m x n x k product on `blocks` blocks, in the order ties go."""
    return [
        Plan(0, bn, s, c)
        for bn in TILE_WIDTHS
        for s in range(1, MAX_SLICES + 1)
        if (c := tile_cost(m, n, k, blocks, bn, s)) is not None
    ]


def plan(m: int, n: int, k: int, blocks: int) -> Plan:
    """The plan for an m x n x k product on `blocks` persistent blocks: 07's up to 128 tokens, else the cheapest
    128-row-tile candidate (min keeps the first of equals; the widest tile with K whole always runs)."""
    if tokens(m):
        p = swapped_plan(m, n, k, blocks, BK)
        return Plan(p.tn, p.bnt, p.slices, p.cost)
    return min(candidates(m, n, k, blocks), key=lambda p: p.cost)


def launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """f_tile_plan_fp8's launch arguments and workspace (kernels.stage.Launch.planner)."""
    p = plan(m, n, k, blocks)
    return LaunchPlan({"TN": p.tn, "BNT": p.bn, "SLICES": p.slices}, p.workspace_floats(m, n))
