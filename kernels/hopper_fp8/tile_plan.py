"""Stage 08's plan (f_tile_plan_fp8), made once per shape on the host and passed to the kernel as TN, BNT and SLICES.

Up to 128 tokens the product is swapped as in 07 (TN = 16, 64 or 128 tokens, wgmma's N; BN = 128 or 64 features a tile);
above, TN is 0 and a tile is 128 rows of C by BN = 256 or 128 columns. Either way K is cut into 1 to 8 slices. Each
candidate is costed in estimated k-tile times a block, as 07's swapped plan: waves x (k tiles a unit + fix-up) x (rows
of A + rows of B + 32) a k tile, the 32 a k tile's fixed costs. 08's fix-up moves S - 1 partial tiles (stored by the
slices below the last, loaded by the last, which keeps its own in registers): 2 for the fences, the count and the round
trip, plus S rows_a x rows_b FP32 values (07's term is 1 + S) through L2 at four times the rate of a k tile's (rows_a + rows_b) x 128
FP8 bytes. The cheapest wins; ties to the wider tile, then to fewer slices. The workspace holds the S - 1 stored
partials in the accumulators' order (slices x tiles x 8 warps x 32 lanes x the accumulators a lane), none where K is
whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.hopper_fp8.swap_plan import BK, ROW_BYTES, SPLIT_TILES, WARPS, tokens
from kernels.stage import LaunchPlan, cdiv

SWAP_WIDTHS = (128, 64)  # features a swapped tile, widest first (the preferred on a tie)
TILE_ROWS = 128  # rows of C a tile above 128 tokens
TILE_WIDTHS = (256, 128)  # its columns, widest first
MAX_SLICES = 8  # K slices at most: the last slice's registers for the others' partials


@dataclass(frozen=True)
class Plan:
    """Tiles of `tn` tokens by `bn` features (swapped), or (tn = 0) 128 rows by `bn` columns; K in `slices`; at `cost`
    estimated k-tile times a block."""

    tn: int
    bn: int
    slices: int
    cost: int

    @property
    def rows_a(self) -> int:
        return self.tn or TILE_ROWS

    def workspace_floats(self, m: int, n: int) -> int:
        if self.slices == 1:
            return 0
        tiles = cdiv(n, self.bn) * (1 if self.tn else cdiv(m, TILE_ROWS))
        lane_floats = (self.tn or self.bn) // 2  # a lane's accumulators: TN / 2 swapped, BN / 2 in 128-row tiles
        return (self.slices - 1) * tiles * WARPS * 32 * lane_floats


def cost(tiles: int, kt: int, blocks: int, rows_a: int, rows_b: int, slices: int) -> int | None:
    """Estimated k-tile times a block of `tiles` tiles of rows_a x rows_b, K's `kt` k tiles in `slices`; None where it
    may not run."""
    if slices > kt or (slices > 1 and (tiles >= blocks or tiles > SPLIT_TILES)):
        return None
    fixup = 0 if slices == 1 else 2 + cdiv(slices * rows_a * rows_b * 4, 4 * (rows_a + rows_b) * ROW_BYTES)
    return cdiv(tiles * slices, blocks) * (cdiv(kt, slices) + fixup) * (rows_a + rows_b + 32)


def candidates(m: int, n: int, k: int, blocks: int) -> list[Plan]:
    """Every plan that may run for an m x n x k product on `blocks` persistent blocks, in the order ties go."""
    kt, tn = cdiv(k, BK), tokens(m)
    if tn:
        shapes = [(bn, cdiv(n, bn)) for bn in SWAP_WIDTHS]
    else:
        shapes = [(bn, cdiv(m, TILE_ROWS) * cdiv(n, bn)) for bn in TILE_WIDTHS]
    return [
        Plan(tn, bn, s, c)
        for bn, tiles in shapes
        for s in range(1, MAX_SLICES + 1)
        if (c := cost(tiles, kt, blocks, tn or TILE_ROWS, bn, s)) is not None
    ]


def plan(m: int, n: int, k: int, blocks: int) -> Plan:
    """The plan for an m x n x k product on `blocks` persistent blocks: the cheapest candidate (min keeps the first of
    equals; the widest tile whole always runs)."""
    return min(candidates(m, n, k, blocks), key=lambda p: p.cost)


def launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """f_tile_plan_fp8's launch arguments and workspace (kernels.stage.Launch.planner)."""
    p = plan(m, n, k, blocks)
    return LaunchPlan({"TN": p.tn, "BNT": p.bn, "SLICES": p.slices}, p.workspace_floats(m, n))
