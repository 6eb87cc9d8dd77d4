"""Walk F 09's host plan (kernels/hopper_fp8/pair_plan.py): its choices on an H100's 132 SMs (the shapes its GPU tests
run, tests/test_gpu_fp8.py), what the kernel walks from it (replayed here as kernels/hopper_fp8/09_pair_tile_fp8.cu
indexes its pairs, tiles and fix-up partials), and the workspace it sizes."""

import pytest
from test_gpu_fp8 import PAIR_PLAN_SHAPES

from kernels.hopper_fp8 import swap_plan
from kernels.hopper_fp8.pair_plan import CLUSTER, PAIR_ROWS, TILE_M, TILE_N, pair_candidates, plan
from kernels.hopper_fp8.swap_plan import BK, MAX_SLICES, SPLIT_TILES, WARPS, tokens
from kernels.registry import catalog
from kernels.stage import cdiv

H100_SMS = 132
STAGE = next(s for s in catalog() if s.name == "f_pair_tile_fp8")
LAUNCH = STAGE.launches[0]


def blocks(m: int, n: int) -> int:
    return LAUNCH.grid(m, n, H100_SMS)[0]


@pytest.mark.parametrize("shape", PAIR_PLAN_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_the_plan_at_the_gpu_tests_shapes(shape):
    p = plan(*shape, blocks(*shape[:2]))
    assert (p.tn, p.tm, p.bn, p.slices) == PAIR_PLAN_SHAPES[shape]


def test_the_gpu_tests_reach_every_branch():
    branches = {(tn, tm, bn if tm == PAIR_ROWS else 0, slices > 1) for tn, tm, bn, slices in PAIR_PLAN_SHAPES.values()}
    swapped = {(tn, 0, 0, s) for tn, s in ((16, True), (64, False), (128, False))}
    pairs = {(0, PAIR_ROWS, bn, s) for bn in (128, 64) for s in (False, True)}
    assert branches == swapped | pairs | {(0, TILE_M, 0, False)}


def test_the_launch_is_07s_geometry_in_clusters_of_two_and_passes_the_plan_by_name():
    swap = next(s for s in catalog() if s.name == "f_swap_plan_fp8").launches[0]
    assert (LAUNCH.tile_m, LAUNCH.tile_n, LAUNCH.dynamic_smem, LAUNCH.splits) == (
        swap.tile_m,
        swap.tile_n,
        swap.dynamic_smem,
        swap.splits,
    )
    assert LAUNCH.cluster == CLUSTER == 2 and LAUNCH.grid(1024, 512, H100_SMS) == (H100_SMS, 1, 1)
    assert LAUNCH.args[-4:] == ("TN", "TM", "BNT", "SLICES") and "W" in LAUNCH.args
    p = plan(1024, 512, 3584, H100_SMS)
    assert LAUNCH.plan(1024, 512, 3584, H100_SMS).args == {"TN": 0, "TM": PAIR_ROWS, "BNT": p.bn, "SLICES": p.slices}


def test_cheaper_wins_and_ties_go_to_the_earlier_kind():
    for m, n, k in [(128, 512, 3584), (128, 14336, 4096), (1024, 512, 3584), (1024, 4096, 4096), (16, 4096, 4096)]:
        g = blocks(m, n)
        p, pair = plan(m, n, k, g), min(pair_candidates(m, n, k, g), key=lambda c: c.cost)
        if p.tm != PAIR_ROWS:
            assert p.cost <= pair.cost
        else:
            assert p == pair


SHAPES = [
    (m, n, k)
    for m in (1, 7, 16, 17, 64, 65, 128, 129, 1000, 1024, 4096)
    for n in (8, 520, 1000, 4096, 14336, 65544)
    for k in (16, 832, 4104, 28672)
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_every_plan_runs_within_the_kernels_limits(shape):
    m, n, k = shape
    g = blocks(m, n)
    assert g % CLUSTER == 0
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
    elif p.tm == TILE_M:  # 05's whole-K tiles
        assert (p.bn, p.slices) == (TILE_N, 1) and STAGE.workspace_floats(m, n, k, H100_SMS) == 0
        return
    else:
        pairs = cdiv(m, CLUSTER * PAIR_ROWS) * cdiv(n, p.bn)
        assert p.tm == PAIR_ROWS and p.bn in (128, 64)
        tiles, lane_floats = CLUSTER * pairs, p.bn // 2
        # the kernel's walk: unit u -> pair u // slices, whose two tiles are rows 2 pm and 2 pm + 1 of every column
        seen = {(2 * (u // p.slices % cdiv(m, 128)) + r, u // p.slices // cdiv(m, 128)) for u in range(pairs * p.slices) for r in (0, 1)}
        assert len(seen) == tiles
    if p.slices == 1:
        assert STAGE.workspace_floats(m, n, k, H100_SMS) == 0
        return
    assert tiles <= SPLIT_TILES  # split tiles' arrival counters: tile x 8 warps
    # the highest float4 the fix-up touches: slice slices-1, tile tiles-1, warp 7, its last quad, lane 31
    q = lane_floats // 4
    plane = tiles * WARPS * q * 32
    last = (p.slices - 1) * plane + ((tiles - 1) * WARPS + WARPS - 1) * q * 32 + (q - 1) * 32 + 31
    assert 4 * (last + 1) == STAGE.workspace_floats(m, n, k, H100_SMS)
