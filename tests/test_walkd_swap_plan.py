"""Walk D 13's host plan (kernels/hopper_d/swap_plan.py): its choices on an H100's 132 SMs (the shapes its GPU tests
run, tests/test_gpu_walkd_shapes.py, and the M <= 128 LLM layers), 12's plan above 128 tokens, the limits of what the
kernel walks from it, and the workspace it sizes. CPU only."""

import dataclasses
from functools import partial

import h100_plans
import pytest
from h100_plans import H100_SMS, shape_id
from test_gpu_walkd_shapes import SWAP_PLAN_SHAPES

from kernels.hopper_d import host_plan
from kernels.hopper_d.swap_plan import K_TILE
from kernels.hopper_fp8.swap_plan import MAX_SLICES, SPLIT_TILES, WARPS, swapped_plan
from kernels.registry import stage_named
from kernels.stage import cdiv

STAGE = stage_named("d_swap_plan_bf16")
LAUNCH = STAGE.launches[0]
TWELVE = stage_named("d_tma_store_bf16").launches[0]
planned = partial(h100_plans.planned, LAUNCH)


def branch(args: dict) -> tuple[int, int, int]:
    return (args["TN"], args["BNT"], args["SLICES"]) if args["TN"] else (0, args["WIDTH"], args["SK"])


@pytest.mark.parametrize("shape", SWAP_PLAN_SHAPES, ids=shape_id)
def test_the_plan_at_the_gpu_tests_shapes(shape):
    assert branch(planned(*shape)) == SWAP_PLAN_SHAPES[shape]


def test_the_gpu_tests_reach_every_branch():
    swapped = {(tn, bnt, s > 1) for tn, bnt, s in SWAP_PLAN_SHAPES.values() if tn}
    assert swapped == {(tn, bnt, s) for tn in (16, 64, 128) for bnt in (128, 64) for s in (False, True)}
    twelve = {sk > 0 for tn, _, sk in SWAP_PLAN_SHAPES.values() if tn == 0}
    assert twelve == {False, True}  # 12's whole waves and its stream-K


def test_19_is_13s_launch_made_a_dependent_launch():
    dependent = stage_named("d_swap_dependent_bf16").launches[0]
    assert dependent.dependent and dataclasses.replace(dependent, dependent=False, kernel=LAUNCH.kernel) == LAUNCH


# The LLM layers of plans/llm.toml at M = 1, 16 and 128 on 132 SMs: (TN, features a tile, K slices)
LLM = {
    (1, 4096, 4096): (16, 128, 4),  # 32 tiles x 4 slices
    (16, 4096, 4096): (16, 128, 4),
    (1, 512, 3584): (16, 64, 8),  # 8 tiles x 8 on a grid of 64 (N / 8)
    (16, 1024, 4096): (16, 64, 8),  # 16 tiles x 8 on a grid of 128
    (128, 4096, 4096): (128, 128, 4),
    (128, 3584, 3584): (128, 128, 4),
    (128, 1024, 4096): (128, 64, 8),
    (128, 512, 3584): (128, 64, 8),
    (128, 1024, 8192): (128, 64, 8),
}


@pytest.mark.parametrize("shape", LLM, ids=shape_id)
def test_the_plan_at_llm_layers(shape):
    assert branch(planned(*shape)) == LLM[shape]


def test_up_to_128_tokens_it_is_walk_fs_swapped_plan_in_64_deep_k_tiles():
    p = swapped_plan(128, 4096, 4096, H100_SMS, K_TILE)
    assert planned(128, 4096, 4096) == {"TN": p.tn, "BNT": p.bnt, "SLICES": p.slices, "WIDTH": 0, "DP": 0, "SK": 0}
    assert swapped_plan(128, 4096, 4096, H100_SMS, 128).slices == 4  # walk F's own, FP8's 128-deep k tiles


@pytest.mark.parametrize("shape", [(129, 4096, 4096), (1024, 4096, 4096), (8192, 8192, 8192), (3000, 2056, 2048)])
def test_above_128_tokens_it_is_12s_plan_on_12s_grid(shape):
    m, n, k = shape
    assert LAUNCH.grid(m, n, H100_SMS) == TWELVE.grid(m, n, H100_SMS)  # N / 8 x M / 16 or M / 128 strips: all SMs
    want = TWELVE.plan(m, n, k, H100_SMS)
    got = LAUNCH.plan(m, n, k, H100_SMS)
    assert {a: got.args[a] for a in ("WIDTH", "DP", "SK")} == dict(want.args) and got.args["TN"] == 0
    assert got.workspace_floats == want.workspace_floats


def test_the_launch_passes_both_plans_by_name_and_both_maps_of_a():
    assert LAUNCH.args[:4] == ("TMA_A", "TMA_A128", "TMA_B", "TMA_C") and "W" in LAUNCH.args
    assert LAUNCH.args[-6:] == ("TN", "BNT", "SLICES", "WIDTH", "DP", "SK")
    assert LAUNCH.tile_m == 16  # TMA_A's box rows: the swap's
    assert STAGE.workspace_floats(16, 14336, 832, H100_SMS) == 0  # K whole: none


SHAPES = [
    (m, n, k)
    for m in (1, 7, 16, 17, 64, 65, 128, 129, 1000)
    for n in (8, 520, 1000, 4096, 14336, 65544)
    for k in (8, 832, 4104, 28672)
]


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_every_plan_runs_within_the_kernels_limits(shape):
    m, n, k = shape
    args = planned(m, n, k)
    work = STAGE.workspace_floats(m, n, k, H100_SMS)
    if args["TN"] == 0:
        assert m > 128 and args["WIDTH"] in host_plan.WIDTHS
        assert work == host_plan.plan(m, n, k, LAUNCH.grid(m, n, H100_SMS)[0]).workspace_floats(m, n)
        return
    tn, bnt, slices, kt = args["TN"], args["BNT"], args["SLICES"], cdiv(k, K_TILE)
    assert m <= tn == min(t for t in (16, 64, 128) if t >= m) and bnt in (64, 128)
    assert 1 <= slices <= min(MAX_SLICES, kt)
    ranges = [(z * kt // slices, (z + 1) * kt // slices) for z in range(slices)]
    assert all(k0 < k1 for k0, k1 in ranges) and ranges[-1][1] == kt  # no empty slice, every k tile once
    if slices == 1:
        assert work == 0
        return
    tiles = cdiv(n, bnt)
    assert tiles < LAUNCH.grid(m, n, H100_SMS)[0] and tiles <= SPLIT_TILES  # arrival counters: tile x 8 warps
    q = tn // 8  # the highest float4 the fix-up touches: slice slices-1, tile tiles-1, warp 7, quad q-1, lane 31
    last = (slices - 1) * tiles * WARPS * q * 32 + ((tiles - 1) * WARPS + WARPS - 1) * q * 32 + (q - 1) * 32 + 31
    assert 4 * (last + 1) == work
