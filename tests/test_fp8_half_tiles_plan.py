"""Walk F 09's host plan (kernels/hopper_fp8/stages.py, half_tiles_plan): walk D 17's at K in 16-bit elements, on an
H100's 132 SMs at the shapes its GPU tests run (tests/test_gpu_fp8.py), and the launch it makes. CPU only."""

from functools import partial

import h100_plans
import pytest
from h100_plans import shape_id
from test_gpu_fp8 import HALF_TILES_SHAPES

from kernels.registry import stage_named

LAUNCH = stage_named("f_half_tiles_fp8").launches[0]
WALK_D = stage_named("d_half_tiles_bf16").launches[0]
planned = partial(h100_plans.planned, LAUNCH)


@pytest.mark.parametrize("shape", HALF_TILES_SHAPES, ids=shape_id)
def test_the_plan_at_the_gpu_tests_shapes(shape):
    args = planned(*shape)
    assert (args["ROWS"], args["WIDTH"], args["SK"]) == HALF_TILES_SHAPES[shape]


def test_the_gpu_tests_reach_every_branch():
    reached = {(rows, width, sk > 0) for rows, width, sk in HALF_TILES_SHAPES.values()}
    assert {(64, w, False) for w in (256, 128, 64)} | {(128, w, False) for w in (256, 128, 64)} <= reached
    assert (128, 64, True) in reached and (128, 128, True) in reached


@pytest.mark.parametrize("m", [1, 16, 128, 1024, 4096])
@pytest.mark.parametrize("n, k", [(512, 3584), (4096, 4096), (14336, 4096), (4096, 14336), (3584, 18944)])
def test_a_k_tile_of_fp8_is_planned_as_one_of_16_bits(m, n, k):
    """128 FP8 elements of K cost what 64 16-bit ones do: the FP8 shape plans as walk D 17's at half its K."""
    fp8 = LAUNCH.plan(m, n, k, h100_plans.H100_SMS)
    bf16 = WALK_D.plan(m, n, k // 2, h100_plans.H100_SMS)
    assert fp8 == bf16


def test_the_launch_is_walk_d_17s_with_b_in_64_row_boxes_and_the_scales():
    assert (LAUNCH.tile_m, LAUNCH.tile_n, LAUNCH.dynamic_smem, LAUNCH.dependent) == (
        WALK_D.tile_m,
        WALK_D.tile_n,
        WALK_D.dynamic_smem,
        True,
    )
    assert LAUNCH.args == tuple(
        {"TMA_B": "TMA_B64"}.get(a, a) for a in WALK_D.args[:6] + ("SCALE_A", "SCALE_B") + WALK_D.args[6:]
    )
