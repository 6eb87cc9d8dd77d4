"""Walk D 20's host plan (kernels/hopper_d/host_plan.py, tall_launch_plan) on an H100's 132 SMs: 256 x 192 tiles at
the shapes its GPU tests run them (tests/test_gpu_walkd_shapes.py), 19's plan wherever they cost no less; and its
CUBIN's wgmmas asynchronous (tests/test_compile.py checks that no stage spills). CPU only."""

import json

import pytest
from h100_plans import H100_SMS, shape_id
from test_gpu_walkd_shapes import HALF_TILES_SHAPES, TALL_TILES_SHAPES
from test_walkd_half_plan import wgmmas_asynchronous

from farm.cli import main
from kernels.hopper_d.host_plan import ARRIVALS, MIN_SPLIT_KT, TALL_ROWS, candidate
from kernels.registry import stage_named

TALL = stage_named("d_tall_tiles_bf16").launches[0]
LEAN = stage_named("d_lean_k_loop_bf16").launches[0]


@pytest.mark.parametrize("shape", TALL_TILES_SHAPES, ids=shape_id)
def test_the_plan_takes_tall_tiles_at_the_gpu_tests_shapes(shape):
    args = TALL.plan(*shape, H100_SMS).args
    assert (args["ROWS"], args["WIDTH"], args["SK"]) == TALL_TILES_SHAPES[shape]


@pytest.mark.parametrize(
    "shape",
    [
        *(s for s in HALF_TILES_SHAPES if s not in TALL_TILES_SHAPES),
        (1024, 1024, 1024),
        (4096, 4096, 4096),
        (8192, 4096, 14336),
        (8192, 3584, 18944),
    ],
)
def test_where_tall_tiles_cost_no_less_it_is_19s_plan_and_workspace(shape):
    mine, nineteen = TALL.plan(*shape, H100_SMS), LEAN.plan(*shape, H100_SMS)
    assert mine.args == nineteen.args and mine.workspace_floats == nineteen.workspace_floats


def test_the_cube_shares_half_a_tile_a_block():
    p = TALL.plan(8192, 8192, 8192, H100_SMS)
    # 32 x 43 = 1376 tiles of 256 x 192: 1310 whole (ten rounds, the last 122 full), then 66 shared, each block's range
    # 64 of a tile's 128 k tiles: the blocks read the same k tiles of a few A and B panels at once
    assert p.args == {"ROWS": 256, "WIDTH": 192, "DP": 1310, "SK": 66}
    assert 66 * 128 // H100_SMS == 64 and p.workspace_floats == 3 * 8192 * 8192


def test_a_split_range_needs_the_blocks_and_k_tiles_to_divide():
    assert candidate(8192, 8192, 8192, 132, 192, True, 1, TALL_ROWS, 2).sk == 66
    assert candidate(8192, 8192, 8192, 130, 192, True, 1, TALL_ROWS, 4) is None  # 130 blocks: no quarter
    assert candidate(8192, 8192, 8200, 132, 192, True, 1, TALL_ROWS, 2) is None  # 129 k tiles: no half
    assert candidate(256, 192 * 60, 8192, 132, 192, True, 1, TALL_ROWS, 2) is None  # 60 tiles: fewer than 66
    assert candidate(8192, 8192, 64 * 2 * MIN_SPLIT_KT, 132, 192, True, 1, TALL_ROWS, 2) is not None
    short = 64 * 2 * MIN_SPLIT_KT - 128  # two k tiles short of two whole ranges
    assert candidate(8192, 8192, short, 132, 192, True, 1, TALL_ROWS, 2) is None


def test_a_shared_tall_tile_takes_16_arrival_counters():
    # 256 rows: 16 consumer warps' blocks of 16 rows, so at most ARRIVALS / 16 tiles shared
    assert candidate(256 * 600, 192, 64 * 64, 600 * 2, 192, True, 2, TALL_ROWS) is None  # 600 > 8192 / 16
    assert candidate(128 * 600, 192, 64 * 64, 600 * 2, 192, True, 2) is not None  # 128 rows: 8 warps, 1024 tiles
    assert ARRIVALS // (TALL_ROWS // 16) == 512


def compile_asynchronous(kernels: str, capsys, within_limits) -> None:
    """`kernels` compile for sm_90a within the limits, and ptxas keeps every wgmma asynchronous (no C7515)."""
    assert main(["compile", "--arch", "sm_90a", "--kernels", kernels, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert all(row["ok"] for row in rows), rows
    within_limits(rows, "sm_90")
    assert all(wgmmas_asynchronous(stage_named(row["stage"])) for row in rows), rows


def test_20_compiles_with_asynchronous_wgmmas(capsys, within_limits):
    """In both types, with 192 accumulators a consumer thread."""
    compile_asynchronous("d_tall_tiles_bf16,d_tall_tiles_fp16", capsys, within_limits)
