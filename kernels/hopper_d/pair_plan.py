"""Stage 14's plan (d_pair_split), made once per shape on the host and passed to the kernel as PAIR (a split pair's tile
width, or 0) and 13's arguments (TN, BNT, SLICES; WIDTH, DP, SK).

PAIR: tiles of 128 x PAIR columns, each tile's K halved between the two CTAs of a cluster (kernels/common/pair_split.cuh),
chosen where those pairs fill the grid in one wave: more than half of the blocks busy and none waiting for a second
wave (blocks / 2 < 2 x tiles <= blocks), the wider tile first, K at least two k tiles (one each), and more than 64
tokens (up to 64, 13's swapped tiles of 16 or 64 tokens hold M; a 128-row tile would be mostly zeros). That is where 13's
plan either leaves the grid half idle (128 x 128 tiles) or walks 64-wide tiles whole (1024^3: 128 tiles of 128 x 64,
11's and 12's plan), or splits K through a workspace. Elsewhere PAIR is 0 and the plan and workspace are 13's
(kernels/hopper_d/swap_plan.py) for this launch's grid, 13's rounded to an even count of blocks (clusters of 2).
"""

from __future__ import annotations

from kernels.hopper_d import swap_plan
from kernels.stage import LaunchPlan, cdiv

BM, BK = 128, 64  # a tile's rows, a k tile's depth (kernels/common/persistent_ws.cuh)
PAIR_WIDTHS = (128, 64)  # a split pair's tile widths, the preferred first
SWAPPED_ONLY = 64  # up to 64 tokens 13's swapped tiles (16 or 64 tokens) hold M; a 128-row tile: mostly zeros
NOT_13 = {"TN": 0, "BNT": 0, "SLICES": 0, "WIDTH": 0, "DP": 0, "SK": 0}


def pair_width(m: int, n: int, k: int, blocks: int) -> int:
    """The tile width of a split pair for an m x n x k product on `blocks` blocks (clusters of 2), or 0 for none."""
    if m <= SWAPPED_ONLY or cdiv(k, BK) < 2:
        return 0
    for width in PAIR_WIDTHS:
        ctas = 2 * cdiv(m, BM) * cdiv(n, width)
        if blocks < 2 * ctas <= 2 * blocks:
            return width
    return 0


def launch_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """d_pair_split's launch arguments and workspace (kernels.stage.Launch.planner)."""
    blocks = max(blocks, 2)  # one cluster at least: a plan checked on one SM (farm/plan.py's sizing) gets a grid of 0
    width = pair_width(m, n, k, blocks)
    if width:
        return LaunchPlan({"PAIR": width, **NOT_13})
    p = swap_plan.launch_plan(m, n, k, blocks)
    return LaunchPlan({"PAIR": 0, **p.args}, p.workspace_floats)
