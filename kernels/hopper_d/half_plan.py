"""Stage 17's plan (d_half_tiles), made once per shape on the host and passed to the kernel as ROWS, WIDTH, DP, SK.

16's plan (host_plan.plan at STREAM_K_PRICE) for 128-row tiles, or whole 64-row tiles of 256, 128 or 64 columns
where those cost fewer estimated k-tile times: 07's model with a 64-row k tile at half a 128-row tile's width term
(half its math; at the shapes it is for, half the bytes of A) and the same fixed 32. Ties go to 16's plan, so
17 changes only the shapes where the half tiles' waves save time. No workspace on the 64-row path: tiles are
walked whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.hopper_d import host_plan
from kernels.stage import LaunchPlan, cdiv

ROWS = 64  # a half tile's rows (kernels/common/stream_k.cuh's ROWS)


@dataclass(frozen=True)
class HalfPlan:
    """Whole 64-row tiles `width` columns wide, at `cost` estimated k-tile times a block (host_plan.Plan's units)."""

    width: int
    cost: int


def half_candidate(m: int, n: int, k: int, blocks: int, width: int) -> HalfPlan:
    tiles = cdiv(m, ROWS) * cdiv(n, width)
    return HalfPlan(width, cdiv(tiles, blocks) * cdiv(k, host_plan.BK) * (width // 2 + 32))


def plan(m: int, n: int, k: int, blocks: int) -> host_plan.Plan | HalfPlan:
    """16's plan, or the cheapest whole 64-row tiles where they cost less (ties: 16's, then the wider tile)."""
    whole = host_plan.plan(m, n, k, blocks, host_plan.STREAM_K_PRICE)
    half = min((half_candidate(m, n, k, blocks, w) for w in host_plan.WIDTHS), key=lambda c: c.cost)
    return half if half.cost < whole.cost else whole


def launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """d_half_tiles's launch arguments and workspace (kernels.stage.Launch.planner)."""
    p = plan(m, n, k, blocks)
    if isinstance(p, HalfPlan):
        return LaunchPlan({"ROWS": ROWS, "WIDTH": p.width, "DP": cdiv(m, ROWS) * cdiv(n, p.width), "SK": 0}, 0)
    return LaunchPlan({"ROWS": host_plan.BM, "WIDTH": p.width, "DP": p.dp, "SK": p.sk}, p.workspace_floats(m, n))
