"""Walk D 14's host plan (kernels/hopper_d/pair_plan.py): its choices on an H100's 132 SMs (the shapes its GPU tests
run, tests/test_gpu_walkd_shapes.py), 13's plan wherever it picks no pair, the limits of what the kernel walks from
it, and its launch (clusters of 2). CPU only."""

import pytest
from test_gpu_walkd_shapes import PAIR_SPLIT_SHAPES

from kernels.hopper_d.pair_plan import BK, BM, PAIR_WIDTHS, SWAPPED_ONLY, pair_width
from kernels.registry import catalog
from kernels.stage import cdiv

H100_SMS = 132
STAGE = next(s for s in catalog() if s.name == "d_pair_split_bf16")
LAUNCH = STAGE.launches[0]
THIRTEEN = next(s for s in catalog() if s.name == "d_swap_plan_bf16").launches[0]


def planned(m: int, n: int, k: int) -> dict:
    return LAUNCH.plan(m, n, k, H100_SMS).args


def branch(args: dict) -> tuple:
    if args["PAIR"]:
        return ("pair", args["PAIR"])
    return (args["TN"], args["BNT"], args["SLICES"]) if args["TN"] else (0, args["WIDTH"], args["SK"])


@pytest.mark.parametrize("shape", PAIR_SPLIT_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_the_plan_at_the_gpu_tests_shapes(shape):
    assert branch(planned(*shape)) == PAIR_SPLIT_SHAPES[shape]


def test_the_gpu_tests_reach_every_branch():
    got = set(PAIR_SPLIT_SHAPES.values())
    assert {b for b in got if b[0] == "pair"} == {("pair", w) for w in PAIR_WIDTHS}
    thirteen = [b for b in got if b[0] != "pair"]
    assert {tn for tn, _, _ in thirteen if tn} == {16, 64, 128}  # 13's swapped tiles
    assert {sk > 0 for tn, _, sk in thirteen if tn == 0} == {False, True}  # 12's whole waves and its stream-K


def test_1024_cubed_is_64_tiles_of_128_x_128_on_128_ctas():
    assert planned(1024, 1024, 1024)["PAIR"] == 128
    assert LAUNCH.grid(1024, 1024, H100_SMS) == (132, 1, 1)  # 66 clusters, 64 of them busy
    assert STAGE.workspace_floats(1024, 1024, 1024, H100_SMS) == 0


def test_the_launch_is_13s_in_clusters_of_2():
    assert LAUNCH.cluster == 2 and LAUNCH.tile_m == THIRTEEN.tile_m == 16
    assert LAUNCH.args[:4] == ("TMA_A", "TMA_A128", "TMA_B", "TMA_C") and "W" in LAUNCH.args
    assert LAUNCH.args[-7:] == ("PAIR", "TN", "BNT", "SLICES", "WIDTH", "DP", "SK")
    for m, n in [(1, 8), (17, 520), (1, 4096), (8192, 8192)]:
        ours, theirs = LAUNCH.grid(m, n, H100_SMS)[0], THIRTEEN.grid(m, n, H100_SMS)[0]
        assert ours % 2 == 0 and theirs <= ours <= theirs + 1


SHAPES = [
    (m, n, k)
    for m in (1, 16, 64, 65, 128, 129, 1000, 1024, 2048)
    for n in (8, 520, 1000, 1024, 4096, 14336)
    for k in (8, 64, 128, 832, 4104)
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_a_pair_fills_one_wave_else_the_plan_is_13s(shape):
    m, n, k = shape
    blocks = LAUNCH.grid(m, n, H100_SMS)[0]
    got = LAUNCH.plan(m, n, k, H100_SMS)
    width = got.args["PAIR"]
    if width:
        ctas = 2 * cdiv(m, BM) * cdiv(n, width)
        assert m > SWAPPED_ONLY and cdiv(k, BK) >= 2  # one k tile at least each
        assert blocks // 2 < ctas <= blocks  # every tile's pair at once: one round a cluster
        assert width == pair_width(m, n, k, blocks) and got.workspace_floats == 0
        assert all(got.args[a] == 0 for a in ("TN", "BNT", "SLICES", "WIDTH", "DP", "SK"))
        return
    want = THIRTEEN.planner(m, n, k, blocks)
    assert {a: got.args[a] for a in want.args} == dict(want.args) and got.workspace_floats == want.workspace_floats
