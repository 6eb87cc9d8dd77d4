"""Walk D 18's host plan (kernels/hopper_d/host_plan.py, half_launch_plan with `shared`): its choices on an H100's 132
SMs at the shapes its GPU tests run (tests/test_gpu_walkd_shapes.py), where it may differ from 17's, and the schedule
the kernel walks from it (replayed as kernels/common/stream_k.cuh's Schedule computes it) within the planes it sizes.
CPU only."""

from functools import partial

import h100_plans
import pytest
from h100_plans import H100_SMS
from test_gpu_walkd_shapes import HALF_STREAM_K_SHAPES
from test_host_plan import segments_walked

from kernels.hopper_d.host_plan import BK, HALF_MAX_SEGMENTS, SHARED_TILES
from kernels.registry import stage_named
from kernels.stage import cdiv

LAUNCH = stage_named("d_half_stream_k_bf16").launches[0]
SEVENTEEN = stage_named("d_half_tiles_bf16").launches[0]
blocks = partial(h100_plans.blocks, LAUNCH)

# Token counts of the LLM plan and below, one and several tile rows, odd sizes; N and K across the LLM layers'
SHAPES = [
    (m, n, k)
    for m in (1, 3, 16, 65, 128, 129, 200, 1024)
    for n in (8, 520, 1000, 1024, 2056, 3592, 4096, 14336, 18952)
    for k in (40, 1032, 3584, 4104, 8192, 18944)
]


@pytest.mark.parametrize("shape", HALF_STREAM_K_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_the_plan_at_the_gpu_tests_shapes(shape):
    args = h100_plans.planned(LAUNCH, *shape)
    assert (args["ROWS"], args["WIDTH"], args["SK"]) == HALF_STREAM_K_SHAPES[shape]


def test_the_gpu_tests_reach_every_shared_64_row_branch():
    reached = {(rows, width, sk > 0) for rows, width, sk in HALF_STREAM_K_SHAPES.values()}
    assert {(64, w, True) for w in (64, 128, 256)} <= reached
    shared_after_a_wave = [s for s, (rows, _, sk) in HALF_STREAM_K_SHAPES.items() if rows == 64 and sk and s[1] > 18000]
    assert h100_plans.planned(LAUNCH, *shared_after_a_wave[0])["DP"] == H100_SMS


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_it_differs_from_17s_only_by_sharing_64_row_tiles(shape):
    mine, seventeen = LAUNCH.plan(*shape, H100_SMS), SEVENTEEN.plan(*shape, H100_SMS)
    assert mine == seventeen or (mine.args["ROWS"] == 64 and mine.args["SK"] > 0), (mine, seventeen)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_every_64_row_tile_is_walked_once_within_the_planned_planes(shape):
    m, n, k = shape
    g = blocks(m, n)
    p = LAUNCH.plan(m, n, k, H100_SMS)
    rows, width, dp, sk = (p.args[a] for a in ("ROWS", "WIDTH", "DP", "SK"))
    if rows != 64:
        return  # 16's path, tests/test_host_plan.py
    assert dp + sk == cdiv(m, rows) * cdiv(n, width)
    if not sk:
        assert p.workspace_floats == 0
        return
    assert dp % g == 0 and sk <= SHARED_TILES  # whole waves first; an arrival counter per warp of a shared tile
    planes = p.workspace_floats // (m * n)
    assert p.workspace_floats == planes * m * n
    assert max(segments_walked(sk, cdiv(k, BK), g)) <= planes <= HALF_MAX_SEGMENTS
    assert sk * cdiv(k, BK) * g < 2**31  # the kernel's 32-bit range arithmetic


def test_the_128_token_projection_shares_16_tiles_of_64_x_128():
    # 17: 32 whole tiles of 64 x 64 on 32 blocks, 128 k tiles each; 18: 16 of 64 x 128 over all 132 blocks
    assert SEVENTEEN.plan(128, 1024, 8192, H100_SMS).args == {"ROWS": 64, "WIDTH": 64, "DP": 32, "SK": 0}
    p = LAUNCH.plan(128, 1024, 8192, H100_SMS)
    assert p.args == {"ROWS": 64, "WIDTH": 128, "DP": 0, "SK": 16}
    assert p.workspace_floats == 10 * 128 * 1024  # 16 x 128 k tiles cut 132 ways: up to 10 segments a tile
