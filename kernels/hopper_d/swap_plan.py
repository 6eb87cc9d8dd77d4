"""Stage 13's plan (d_swap_plan), made once per shape on the host and passed to the kernel as TN, BNT, SLICES (the
swapped product, up to 128 tokens) and WIDTH, DP, SK (12's plan, above).

Up to 128 tokens it is walk F 07's swapped plan (kernels/hopper_fp8/swap_plan.py `swapped_plan`: the fewest tokens
of 16, 64 or 128 that hold M, 128 or 64 features a tile, K in 1 to 8 slices, the cheapest in estimated k-tile times)
with walk D's k tiles, 64 elements deep: the same 128-byte rows as FP8's 128, so the same bytes a k tile, twice as
many of them. The workspace: the swap's partials in the accumulators' order, none where K is whole. Above 128 tokens
TN is 0 and the plan and workspace are 12's (kernels/hopper_d/host_plan.py), for the grid this launch makes.
"""

from __future__ import annotations

from kernels.hopper_d import host_plan
from kernels.hopper_fp8 import swap_plan
from kernels.stage import LaunchPlan

K_TILE = 64  # 16-bit elements of K a k tile (kernels/common/swapped.cuh: Bit16)


def launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """d_swap_plan's launch arguments and workspace (kernels.stage.Launch.planner)."""
    if swap_plan.tokens(m):
        p = swap_plan.swapped_plan(m, n, k, blocks, K_TILE)
        args = {"TN": p.tn, "BNT": p.bnt, "SLICES": p.slices, "WIDTH": 0, "DP": 0, "SK": 0}
        return LaunchPlan(args, p.workspace_floats(m, n))
    h = host_plan.plan(m, n, k, blocks)
    return LaunchPlan(
        {"TN": 0, "BNT": 0, "SLICES": 0, "WIDTH": h.width, "DP": h.dp, "SK": h.sk}, h.workspace_floats(m, n)
    )
