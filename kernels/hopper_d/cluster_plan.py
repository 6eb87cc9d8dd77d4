"""Stage 14's plan (d_cluster_pair), made once per shape on the host and passed to the kernel as SPLIT (a split pair's
tile width, or 0) and 13's arguments (TN, BNT, SLICES; WIDTH, DP, SK).

SPLIT (kernels/common/cluster_pair.cuh run_split): at 65 to 128 tokens, tiles of 128 x SPLIT columns with each tile's K
halved between the two CTAs of a cluster, where K holds two k tiles at least (one each) and the pairs keep at least
half of the grid busy (2 x tiles >= blocks / 2; the tiles may take several rounds of the clusters). The width, 128 or
64, is the cheaper in 09's k-tile times, rounds x half the k tiles x (width + 32), ties to 128. Measured on an H200
(kernels/hopper_d/README.md): at 128 tokens it beat 13 wherever the pairs filled half the grid, and lost at
128 x 1024 x 8192 (forced: 32 CTAs of 64 k tiles against 13's 128 of 8), which the half-grid rule leaves to 13; above
128 tokens it lost at 1024^3 (8 k tiles a CTA: the exchange and the cluster's start not paid for) and 2048^3
(forced), so it is not planned there. Up to 64 tokens 13's swapped tiles (16 or 64 tokens) hold M, where a 128-row
tile would be mostly zeros.
Elsewhere the plan and workspace are 13's (kernels/hopper_d/swap_plan.py) for this launch's grid, 13's rounded to an
even count of blocks (clusters of 2).
"""

from __future__ import annotations

from kernels.hopper_d import swap_plan
from kernels.stage import LaunchPlan, cdiv

BM, BK = 128, 64  # a tile's rows, a k tile's depth (kernels/common/persistent_ws.cuh)
SPLIT_WIDTHS = (128, 64)  # a split pair's tile widths, the preferred first
SPLIT_TOKENS = (65, 128)  # SPLIT's token counts
NOT_13 = {"TN": 0, "BNT": 0, "SLICES": 0, "WIDTH": 0, "DP": 0, "SK": 0}


def split_width(m: int, n: int, k: int, blocks: int) -> int:
    """The tile width of a split pair for an m x n x k product on `blocks` blocks (clusters of 2), or 0 for none."""
    if not SPLIT_TOKENS[0] <= m <= SPLIT_TOKENS[1] or cdiv(k, BK) < 2:
        return 0
    clusters = blocks // 2

    def cost(width: int) -> int:
        return cdiv(cdiv(m, BM) * cdiv(n, width), clusters) * cdiv(cdiv(k, BK), 2) * (width + 32)

    width = min(SPLIT_WIDTHS, key=cost)  # min keeps the first of equals
    return width if 2 * (2 * cdiv(m, BM) * cdiv(n, width)) >= blocks else 0


def launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """d_cluster_pair's launch arguments and workspace (kernels.stage.Launch.planner)."""
    blocks = max(blocks, 2)  # one cluster at least: a plan checked on one SM (farm/plan.py's sizing) gets a grid of 0
    width = split_width(m, n, k, blocks)
    if width:
        return LaunchPlan({"SPLIT": width, **NOT_13})
    p = swap_plan.launch_plan(m, n, k, blocks)
    return LaunchPlan({"SPLIT": 0, **p.args}, p.workspace_floats)
