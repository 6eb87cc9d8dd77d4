"""Walk D 22's plan (kernels/hopper_d/host_plan.py, mixed_launch_plan) on an H100's 132 SMs: 21's plan, or 256 x 192
tiles over the first spans of 768 columns beside 128 x 256 tiles over the rest where that costs less; and its CUBIN's
wgmmas asynchronous with no spill. CPU only."""

import pytest
from h100_plans import H100_SMS, shape_id
from test_gpu_walkd_shapes import HALF_TILES_SHAPES, MIXED_TILES_SHAPES, TALL_TILES_SHAPES
from test_walkd_tall_plan import compile_asynchronous

from kernels.hopper_d.host_plan import SPAN, mixed_cost, tall_plan
from kernels.registry import stage_named

MIXED = stage_named("d_mixed_tiles_bf16").launches[0]
ORDERED = stage_named("d_tile_order_bf16").launches[0]
CUBES = [(s, s, s) for s in (1024, 2048, 4096, 8192)]


@pytest.mark.parametrize("shape", [*HALF_TILES_SHAPES, *TALL_TILES_SHAPES, *CUBES], ids=shape_id)
def test_unmixed_the_plan_is_21s_and_mixed_it_costs_less(shape):
    mine, ordered = MIXED.plan(*shape, H100_SMS), ORDERED.plan(*shape, H100_SMS)
    spans = mine.args["SPANS"]
    if spans == 0:
        assert {k: v for k, v in mine.args.items() if k != "SPANS"} == ordered.args
        assert mine.workspace_floats == ordered.workspace_floats
    else:
        assert mixed_cost(*shape, H100_SMS, spans) < tall_plan(*shape, H100_SMS)[1].cost
        assert mine.workspace_floats == 0 and mine.args["SK"] == 0 and 0 < spans * SPAN < shape[1]


@pytest.mark.parametrize("shape", MIXED_TILES_SHAPES, ids=shape_id)
def test_the_gpu_tests_mixed_shapes_are_mixed(shape):
    assert MIXED.plan(*shape, H100_SMS).args["SPANS"] == MIXED_TILES_SHAPES[shape]


def test_4096_cubed_takes_two_tall_tiles_and_a_wide_one_a_block():
    # 16 x 16 tall tiles over 3072 columns and 32 x 4 wide ones over 1024, 384 units on 132 blocks: block 0 takes
    # tall tiles 0 and 132 and wide tile 8; 64 k tiles at 416 (tall: 192 x 2 + 32) and 288 (256 + 32) a k tile
    assert MIXED.plan(4096, 4096, 4096, H100_SMS).args == {
        "ROWS": 256,
        "WIDTH": 256,
        "DP": 384,
        "SK": 0,
        "GROUP": 16,
        "SPANS": 4,
    }
    assert mixed_cost(4096, 4096, 4096, H100_SMS, 4) == 64 * (2 * 416 + 288)  # 21's: 4 waves of 64 x 288, 73728
    assert tall_plan(4096, 4096, 4096, H100_SMS)[1].cost == 4 * 64 * 288


def test_where_the_tall_tiles_fill_whole_waves_nothing_is_mixed():
    assert MIXED.plan(8192, 8192, 8192, H100_SMS).args["SPANS"] == 0
    assert MIXED.plan(2048, 2048, 2048, H100_SMS).args["SPANS"] == 0  # one wave: tall tiles would lengthen it


def test_mixed_tiles_compile_without_spilling_or_serialising(capsys, within_limits):
    compile_asynchronous("d_mixed_tiles_bf16,d_mixed_tiles_fp16", capsys, within_limits)
