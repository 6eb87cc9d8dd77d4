"""Walk F 07's host plan (kernels/hopper_fp8/swap_plan.py), 132 SMs: its choices, what the kernel walks from it, its
workspace; 10's launch."""

import dataclasses
from functools import partial

import h100_plans
import pytest
from h100_plans import H100_SMS, shape_id
from test_gpu_fp8 import SWAP_PLAN_SHAPES

from kernels.hopper_fp8.swap_plan import BK, MAX_SLICES, SPLIT_TILES, WARPS, plan, split_k_slices, tokens
from kernels.registry import stage_named
from kernels.stage import cdiv

STAGE = stage_named("f_swap_plan_fp8")
LAUNCH = STAGE.launches[0]
blocks = partial(h100_plans.blocks, LAUNCH)


@pytest.mark.parametrize("shape", SWAP_PLAN_SHAPES, ids=shape_id)
def test_the_plan_at_the_gpu_tests_shapes(shape):
    p = plan(*shape, blocks(*shape[:2]))
    assert (p.tn, p.bnt, p.slices) == SWAP_PLAN_SHAPES[shape]


def test_the_gpu_tests_reach_every_branch():
    branches = {(tn, bnt, slices > 1) for tn, bnt, slices in SWAP_PLAN_SHAPES.values()}
    assert branches == {(tn, bnt, s) for tn in (16, 64, 128) for bnt in (128, 64) for s in (False, True)} | {
        (0, 256, False),
        (0, 256, True),
    }


# LLM layers at M = 1, 16 and 128: (TN, features a tile, K slices)
LLM = {
    (1, 4096, 4096): (16, 128, 4),
    (16, 1024, 4096): (16, 64, 8),  # a grid of 128
    (1, 512, 3584): (16, 64, 7),  # a grid of 64
    (1, 28672, 8192): (16, 128, 1),
    (128, 4096, 4096): (128, 128, 4),
    (128, 1024, 4096): (128, 64, 8),
    (128, 14336, 4096): (128, 128, 1),
    (128, 8192, 8192): (128, 128, 2),
}


@pytest.mark.parametrize("shape", LLM, ids=shape_id)
def test_the_plan_at_llm_layers(shape):
    p = plan(*shape, blocks(*shape[:2]))
    assert (p.tn, p.bnt, p.slices) == LLM[shape]


def test_the_launch_passes_the_plan_by_name_and_sizes_the_workspace_from_it():
    assert LAUNCH.args[-3:] == ("TN", "BNT", "SLICES") and "W" in LAUNCH.args
    assert LAUNCH.plan(1, 4096, 4096, H100_SMS).args == {"TN": 16, "BNT": 128, "SLICES": 4}
    assert STAGE.workspace_floats(1, 4096, 4096, H100_SMS) == 4 * 32 * WARPS * 16 * 16  # slices x tiles x warps x 16 TN
    assert STAGE.workspace_floats(16, 14336, 4096, H100_SMS) == 0  # K whole: none
    assert STAGE.workspace_floats(200, 1000, 2064, H100_SMS) == 8 * 200 * 1000  # 05's planes of M x N


def test_walk_f_10_is_07s_launch_made_a_dependent_launch():
    """10 changes how 07 is launched, nothing it is launched with."""
    dependent = stage_named("f_swap_dependent_fp8").launches[0]
    assert dependent.dependent and not LAUNCH.dependent
    assert dataclasses.replace(dependent, dependent=False, kernel=LAUNCH.kernel) == LAUNCH


SHAPES = [
    (m, n, k)
    for m in (1, 7, 16, 17, 64, 65, 128, 129, 1000)
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
    if p.tn == 0:  # 05's path: slices_for's count
        assert m > 128 and p.slices == split_k_slices(m, n, k, g)
        assert STAGE.workspace_floats(m, n, k, H100_SMS) == (p.slices * m * n if p.slices > 1 else 0)
        return
    assert p.tn == tokens(m) >= m and p.bnt in (64, 128)
    tiles = cdiv(n, p.bnt)
    ranges = [(z * kt // p.slices, (z + 1) * kt // p.slices) for z in range(p.slices)]
    assert all(k0 < k1 for k0, k1 in ranges) and ranges[-1][1] == kt  # no empty slice, every k tile once
    if p.slices == 1:
        assert STAGE.workspace_floats(m, n, k, H100_SMS) == 0
        return
    assert tiles < g and tiles <= SPLIT_TILES  # arrival counters: 8 a tile
    # the last float4 07's fix-up touches: last slice, tile, warp (7), quad and lane
    q = p.tn // 8
    plane = tiles * WARPS * q * 32
    last = (p.slices - 1) * plane + ((tiles - 1) * WARPS + WARPS - 1) * q * 32 + (q - 1) * 32 + 31
    assert 4 * (last + 1) == STAGE.workspace_floats(m, n, k, H100_SMS)
