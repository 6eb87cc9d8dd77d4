"""Walk D 23's plan (kernels/hopper_d/host_plan.py, halves_launch_plan) on an H100's 132 SMs: 22's plan, or 256 x 192
tiles whole with the last part-filled round's cut in halves of 128 rows where that costs less; 24 on 23's plan; both
CUBINs' wgmmas asynchronous with no spill. CPU only."""

import dataclasses

import pytest
from h100_plans import H100_SMS, shape_id
from test_gpu_walkd_shapes import HALVES_SHAPES, MIXED_TILES_SHAPES, TALL_TILES_SHAPES
from test_walkd_tall_plan import compile_asynchronous

from kernels.hopper_d.host_plan import halves_cost, launch_is_not_21s, mixed_cost, tall_plan
from kernels.registry import stage_named

HALVES = stage_named("d_tail_halves_bf16").launches[0]
MIXED = stage_named("d_mixed_tiles_bf16").launches[0]
ORDERED = stage_named("d_tile_order_bf16").launches[0]


@pytest.mark.parametrize("shape", [*TALL_TILES_SHAPES, *MIXED_TILES_SHAPES, *HALVES_SHAPES], ids=shape_id)
def test_without_halves_the_plan_is_22s_and_with_them_it_costs_less(shape):
    mine, mixed = HALVES.plan(*shape, H100_SMS), MIXED.plan(*shape, H100_SMS)
    if mine.args["HALVES"] == 0:
        assert {k: v for k, v in mine.args.items() if k != "HALVES"} == mixed.args
        assert mine.workspace_floats == mixed.workspace_floats
    else:
        spans = mixed.args["SPANS"]
        chosen = mixed_cost(*shape, H100_SMS, spans) if spans else tall_plan(*shape, H100_SMS)[1].cost
        assert halves_cost(*shape, H100_SMS) < chosen
        assert mine.workspace_floats == 0 and mine.args["SK"] == 0 and mine.args["DP"] % H100_SMS == 0


@pytest.mark.parametrize("shape", HALVES_SHAPES, ids=shape_id)
def test_the_gpu_tests_halves_shapes_take_halves(shape):
    plan = HALVES.plan(*shape, H100_SMS).args
    assert plan["HALVES"] == 1 and plan["DP"] == HALVES_SHAPES[shape]


def test_8192_cubed_runs_ten_whole_waves_then_112_halves():
    # 32 x 43 = 1376 tall tiles: 1320 whole (ten waves), 56 as 112 halves of 128 x 192 on 112 blocks; 128 k tiles at
    # 416 (192 x 2 + 32) and 224 (192 + 32); 21's: 1310 whole, 66 shared in halves of K, 1354 k tiles at 416 with the fix-up
    assert HALVES.plan(8192, 8192, 8192, H100_SMS).args == {
        "ROWS": 256,
        "WIDTH": 192,
        "DP": 1320,
        "SK": 0,
        "GROUP": 11,
        "SPANS": 0,
        "HALVES": 1,
    }
    assert halves_cost(8192, 8192, 8192, H100_SMS) == 128 * (10 * 416 + 224)
    assert tall_plan(8192, 8192, 8192, H100_SMS)[1].cost == 1354 * 416


def test_24_is_23s_launch():
    assert dataclasses.replace(stage_named("d_evict_first_c_bf16").launches[0], kernel=HALVES.kernel) == HALVES


def test_whole_waves_and_22s_mix_keep_22s_plan():
    assert halves_cost(8448, 6144, 8192, H100_SMS) is None  # 33 x 32 = 1056 tall tiles, eight whole waves
    assert HALVES.plan(4096, 4096, 4096, H100_SMS).args["SPANS"] == 4


def test_23_and_24_compile_without_spilling_or_serialising(capsys, within_limits):
    compile_asynchronous(
        "d_tail_halves_bf16,d_tail_halves_fp16,d_evict_first_c_bf16,d_evict_first_c_fp16", capsys, within_limits
    )


def test_launch_is_not_21s_where_22s_or_23s_plan_leaves_21s():
    """The llm-tail step's shapes: 22 and 23 run 21's launch (SPANS and HALVES 0) at the other LLM shapes."""
    from farm.data.llm_shapes import plan_shapes

    new = set()
    for shape in plan_shapes():
        ours = [
            {k: v for k, v in s.plan(*shape, H100_SMS).args.items() if v or k not in ("SPANS", "HALVES")}
            for s in (MIXED, HALVES)
        ]
        differs = ours != [ORDERED.plan(*shape, H100_SMS).args] * 2
        assert launch_is_not_21s(*shape, H100_SMS) == differs
        new |= {shape} if differs else set()
    assert len(new) == 16 and (8192, 8192, 8192) in new
