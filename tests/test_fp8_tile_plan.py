"""Walk F 08's host plan (kernels/hopper_fp8/tile_plan.py): its choices on an H100's 132 SMs (the shapes its GPU tests
run, tests/test_gpu_fp8.py, and the small-work LLM layers of issue 32), what the kernel walks from it (replayed here as
kernels/hopper_fp8/08_tile_plan_fp8.cu indexes its units and its fix-up's partials), and the workspace it sizes."""

from functools import partial

import h100_plans
import pytest
from h100_plans import H100_SMS, shape_id
from test_gpu_fp8 import TILE_PLAN_SHAPES

from kernels.hopper_fp8 import swap_plan
from kernels.hopper_fp8.swap_plan import BK, SPLIT_TILES, WARPS, tokens
from kernels.hopper_fp8.tile_plan import MAX_SLICES, TILE_ROWS, plan
from kernels.registry import stage_named
from kernels.stage import cdiv

STAGE = stage_named("f_tile_plan_fp8")
LAUNCH = STAGE.launches[0]
blocks = partial(h100_plans.blocks, LAUNCH)


@pytest.mark.parametrize("shape", TILE_PLAN_SHAPES, ids=shape_id)
def test_the_plan_at_the_gpu_tests_shapes(shape):
    p = plan(*shape, blocks(*shape[:2]))
    assert (p.tn, p.bn, p.slices) == TILE_PLAN_SHAPES[shape]


def test_the_gpu_tests_reach_every_branch():
    branches = {(tn, bn, slices > 1) for tn, bn, slices in TILE_PLAN_SHAPES.values()}
    swapped = {(tn, bn, s) for tn in (16, 64, 128) for bn in (128, 64) for s in (False, True)}
    tiles = {(0, bn, s) for bn in (256, 128) for s in (False, True)}
    assert branches == swapped | tiles


def test_the_launch_is_07s_geometry_and_passes_the_plan_by_name():
    swap = stage_named("f_swap_plan_fp8").launches[0]
    assert (LAUNCH.tile_m, LAUNCH.tile_n, LAUNCH.dynamic_smem, LAUNCH.splits) == (
        swap.tile_m,
        swap.tile_n,
        swap.dynamic_smem,
        swap.splits,
    )
    assert LAUNCH.args[-3:] == ("TN", "BNT", "SLICES") and "W" in LAUNCH.args
    p = plan(1024, 512, 3584, H100_SMS)
    assert LAUNCH.plan(1024, 512, 3584, H100_SMS).args == {"TN": 0, "BNT": p.bn, "SLICES": p.slices}


SHAPES = [
    (m, n, k)
    for m in (1, 7, 16, 17, 64, 65, 128, 129, 1000, 1024, 4096)
    for n in (8, 520, 1000, 4096, 14336, 65544)
    for k in (16, 832, 4104, 28672)
]


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_every_plan_runs_within_the_kernels_limits(shape):
    m, n, k = shape
    g = blocks(m, n)
    p = plan(m, n, k, g)
    kt = cdiv(k, BK)
    assert 1 <= p.slices <= min(MAX_SLICES, kt)
    ranges = [(z * kt // p.slices, (z + 1) * kt // p.slices) for z in range(p.slices)]
    assert all(k0 < k1 for k0, k1 in ranges) and ranges[-1][1] == kt  # no empty slice, every k tile once
    if p.tn:  # 07's plan
        assert p.tn == tokens(m) >= m and p.bn in (64, 128)
        seven = swap_plan.plan(m, n, k, g)
        assert (p.tn, p.bn, p.slices) == (seven.tn, seven.bnt, seven.slices)
        tiles, lane_floats = cdiv(n, p.bn), p.tn // 2
    else:
        assert m > 128 and p.bn in (256, 128)
        tiles, lane_floats = cdiv(m, TILE_ROWS) * cdiv(n, p.bn), p.bn // 2
    if p.slices == 1:
        assert STAGE.workspace_floats(m, n, k, H100_SMS) == 0
        return
    assert tiles < g and tiles <= SPLIT_TILES  # split tiles' arrival counters: tile x 8 warps
    # the highest float4 08's fix-up touches: slice slices-1, tile tiles-1, warp 7, its last quad, lane 31
    q = lane_floats // 4
    plane = tiles * WARPS * q * 32
    last = (p.slices - 1) * plane + ((tiles - 1) * WARPS + WARPS - 1) * q * 32 + (q - 1) * 32 + 31
    assert 4 * (last + 1) == STAGE.workspace_floats(m, n, k, H100_SMS)
