"""Stage 09's plan (f_pair_tile_fp8), made once per shape on the host and passed to the kernel as TN, TM, BNT and SLICES.

Three kinds of tile. Up to 128 tokens 07's swapped tiles (kernels/hopper_fp8/swap_plan.py: TN = 16, 64 or 128 tokens
as wgmma's N, BNT = 128 or 64 features, K in 1 to 8 slices). Pair tiles (TN 0, TM 64): 64 rows of C by BNT = 128 or 64
columns, the two consumer warpgroups on alternate k tiles, the CTAs of a 2-CTA cluster on the two tiles one above the other sharing B's boxes
(multicast), K in 1 to 8 slices. 05's 128 x 256 tiles (TN 0, TM 128), 07's path above 128 tokens, K whole where they
fill the blocks.

Pair tiles are costed as 07's swapped candidates are (waves x (k tiles a unit + fix-up) x (rows a k tile moves + 32)):
a wave is one unit per cluster (blocks / 2), a k tile moves 64 rows of A and half of the pair's BNT rows of B, and the
fix-up is 07's term for 64 x BNT partials; 05's whole-K tiles the same way (waves x k tiles x (128 + 256 + 32)). Up to
128 tokens the cheaper of 07's swapped plan and the cheapest pair plan wins (a tie to the swapped); above, the cheaper of
05's whole-K tiles and the cheapest pair plan (a tie to 05's).
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.hopper_fp8.swap_plan import BK, MAX_SLICES, ROW_BYTES, SPLIT_TILES, WARPS, swapped_plan, tokens
from kernels.stage import LaunchPlan, cdiv

CLUSTER = 2  # CTAs a cluster: a pair of tiles one above the other
PAIR_ROWS = 64  # rows of C a pair tile
PAIR_WIDTHS = (128, 64)  # its columns, widest first (the preferred on a tie)
TILE_M, TILE_N = 128, 256  # 05's tile


@dataclass(frozen=True)
class Plan:
    """Swapped tiles of `tn` tokens by `bn` features; or (tn = 0) `tm` rows by `bn` columns (64: pair tiles; 128: 05's
    tiles, K whole); K in `slices`; at `cost` estimated k-tile times a block."""

    tn: int
    tm: int
    bn: int
    slices: int
    cost: int

    def tiles(self, m: int, n: int) -> int:
        """Tiles of the plan: swapped tiles, or the pairs' 64-row tiles (a pair's lower one may lie past M)."""
        if self.tn:
            return cdiv(n, self.bn)
        return CLUSTER * cdiv(m, CLUSTER * self.tm) * cdiv(n, self.bn)

    def workspace_floats(self, m: int, n: int) -> int:
        if self.slices == 1:
            return 0
        if self.tn:
            return self.slices * self.tiles(m, n) * WARPS * 16 * self.tn  # 07's: a warp's partial is 32 lanes x tn / 2
        if self.tm == TILE_M:
            return self.slices * m * n  # 05's planes of M x N
        return self.slices * self.tiles(m, n) * WARPS * 32 * (self.bn // 2)  # a lane's bn / 2 accumulators


def pair_cost(m: int, n: int, k: int, blocks: int, bn: int, slices: int) -> int | None:
    """Estimated k-tile times a block of 64 x bn pair tiles with K in `slices`, or None where it may not run."""
    pairs, kt, clusters = cdiv(m, CLUSTER * PAIR_ROWS) * cdiv(n, bn), cdiv(k, BK), max(1, blocks // CLUSTER)
    if slices > kt or (slices > 1 and (pairs >= clusters or CLUSTER * pairs > SPLIT_TILES)):
        return None
    rows = PAIR_ROWS + bn // CLUSTER  # a CTA's own A rows and its half of the shared B rows
    fixup = 0 if slices == 1 else 2 + cdiv((1 + slices) * PAIR_ROWS * bn * 4, 4 * (PAIR_ROWS + bn) * ROW_BYTES)
    return cdiv(pairs * slices, clusters) * (cdiv(kt, slices) + fixup) * (rows + 32)


def tile_cost(m: int, n: int, k: int, blocks: int) -> int:
    """Estimated k-tile times a block of 05's 128 x 256 tiles with K whole."""
    return cdiv(cdiv(m, TILE_M) * cdiv(n, TILE_N), blocks) * cdiv(k, BK) * (TILE_M + TILE_N + 32)


def pair_candidates(m: int, n: int, k: int, blocks: int) -> list[Plan]:
    """Every pair-tile plan that may run, in the order ties go (wider first, then fewer slices)."""
    return [
        Plan(0, PAIR_ROWS, bn, s, c)
        for bn in PAIR_WIDTHS
        for s in range(1, MAX_SLICES + 1)
        if (c := pair_cost(m, n, k, blocks, bn, s)) is not None
    ]


def plan(m: int, n: int, k: int, blocks: int) -> Plan:
    """The plan for an m x n x k product on `blocks` blocks (clusters of two)."""
    pair = min(pair_candidates(m, n, k, blocks), key=lambda p: p.cost)  # (128, whole K) always runs
    if tokens(m):
        s = swapped_plan(m, n, k, blocks, BK)
        return Plan(s.tn, 0, s.bnt, s.slices, s.cost) if s.cost <= pair.cost else pair
    whole = Plan(0, TILE_M, TILE_N, 1, tile_cost(m, n, k, blocks))
    return whole if whole.cost <= pair.cost else pair


def launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """f_pair_tile_fp8's launch arguments and workspace (kernels.stage.Launch.planner); a grid asked for on fewer SMs than
    a cluster (sm_count 1: the workspace's upper bound) is planned as one cluster."""
    p = plan(m, n, k, max(blocks, CLUSTER))
    return LaunchPlan({"TN": p.tn, "TM": p.tm, "BNT": p.bn, "SLICES": p.slices}, p.workspace_floats(m, n))
