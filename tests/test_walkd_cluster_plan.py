"""Walk D 14's host plan (cluster_plan.py), 132 SMs: its picks at its GPU tests' shapes and LLM layers at 128 tokens,
13's plan elsewhere, the kernel's limits, launch."""

from functools import partial

import h100_plans
import pytest
from h100_plans import H100_SMS, shape_id
from test_gpu_walkd_shapes import CLUSTER_PAIR_SHAPES

from kernels.hopper_d.cluster_plan import BK, BM, SPLIT_TOKENS, SPLIT_WIDTHS, split_width
from kernels.registry import stage_named
from kernels.stage import cdiv

STAGE = stage_named("d_cluster_pair_bf16")
LAUNCH = STAGE.launches[0]
THIRTEEN = stage_named("d_swap_plan_bf16").launches[0]
THIRTEENS = ("TN", "BNT", "SLICES", "WIDTH", "DP", "SK")
planned = partial(h100_plans.planned, LAUNCH)


def branch(args: dict) -> tuple:
    if args["SPLIT"]:
        return ("split", args["SPLIT"])
    return (args["TN"], args["BNT"], args["SLICES"]) if args["TN"] else (0, args["WIDTH"], args["SK"])


@pytest.mark.parametrize("shape", CLUSTER_PAIR_SHAPES, ids=shape_id)
def test_the_plan_at_the_gpu_tests_shapes(shape):
    assert branch(planned(*shape)) == CLUSTER_PAIR_SHAPES[shape]


def test_the_gpu_tests_reach_every_branch():
    got = set(CLUSTER_PAIR_SHAPES.values())
    assert {b for b in got if b[0] == "split"} == {("split", w) for w in SPLIT_WIDTHS}
    thirteen = [b for b in got if b[0] != "split"]
    assert {tn for tn, _, _ in thirteen if tn} == {16, 64, 128}  # swapped (13)
    assert {sk > 0 for tn, _, sk in thirteen if tn == 0} == {False, True}  # 12's waves, stream-K


# llm.toml's layers at M = 128, cubes: the H200's best of 13 and SPLIT 128/64; 13 where pairs idle most SMs or
# M > 128.
LLM_128 = {
    (128, 4096, 4096): ("split", 64),
    (128, 3584, 3584): ("split", 64),
    (128, 4096, 14336): ("split", 64),
    (128, 3584, 18944): ("split", 64),
    (128, 8192, 8192): ("split", 128),
    (128, 8192, 28672): ("split", 128),
    (128, 14336, 4096): ("split", 128),  # 2 rounds
    (128, 18944, 3584): ("split", 128),  # 3 rounds
    (128, 28672, 8192): ("split", 128),  # 4 rounds
    (128, 1024, 4096): (128, 64, 8),  # 16 tiles: 32 CTAs paired, 128 sliced
    (128, 512, 3584): (128, 64, 8),
    (128, 1024, 8192): (128, 64, 8),
    (1024, 1024, 1024): (0, 64, 0),  # 12's whole 128 x 64 tiles
    (1024, 1024, 4096): (0, 64, 0),
    (2048, 2048, 2048): (0, 256, 0),
}


@pytest.mark.parametrize("shape", LLM_128, ids=shape_id)
def test_the_plan_at_llm_layers_and_the_cubes(shape):
    assert branch(planned(*shape)) == LLM_128[shape]


def test_the_launch_is_13s_in_clusters_of_2():
    assert LAUNCH.cluster == 2 and LAUNCH.tile_m == THIRTEEN.tile_m == 16  # TMA_A: 16-row boxes
    assert LAUNCH.args[:4] == ("TMA_A", "TMA_A128", "TMA_B", "TMA_C") and "W" in LAUNCH.args
    assert LAUNCH.args[-7:] == ("SPLIT", *THIRTEENS)
    for m, n in [(1, 8), (17, 520), (1, 4096), (200, 8), (8192, 8192)]:
        ours, theirs = LAUNCH.grid(m, n, H100_SMS)[0], THIRTEEN.grid(m, n, H100_SMS)[0]
        assert ours % 2 == 0 and theirs <= ours <= theirs + 1
    assert STAGE.workspace_floats(1024, 1024, 1024, H100_SMS) == STAGE.workspace_floats(128, 8192, 8192, H100_SMS) == 0


SHAPES = [
    (m, n, k)
    for m in (1, 16, 64, 65, 100, 128, 129, 200, 1000, 1024, 3000)
    for n in (8, 264, 520, 1000, 1024, 4096, 14336)
    for k in (8, 64, 128, 832, 4104)
]


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_every_plan_runs_within_the_kernels_limits(shape):
    m, n, k = shape
    blocks, got = LAUNCH.grid(m, n, H100_SMS)[0], LAUNCH.plan(m, n, k, H100_SMS)
    if got.args["SPLIT"]:
        width = got.args["SPLIT"]
        assert SPLIT_TOKENS[0] <= m <= SPLIT_TOKENS[1] and cdiv(k, BK) >= 2  # a k tile each
        assert 2 * (2 * cdiv(m, BM) * cdiv(n, width)) >= blocks  # pairs busy half the grid
        assert width == split_width(m, n, k, blocks) and got.workspace_floats == 0
        assert all(got.args[a] == 0 for a in THIRTEENS)
        return
    want = THIRTEEN.planner(m, n, k, blocks)
    assert {a: got.args[a] for a in want.args} == dict(want.args) and got.workspace_floats == want.workspace_floats
