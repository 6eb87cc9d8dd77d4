"""On an sm_90 GPU: walk D at the shapes LLM layers and tails give it, verified against cuBLAS with C poisoned.

Every walk-D stage at M tails (1 row, 3 rows, 129 rows), N and K off its tile sizes; stages 07 (narrow_tiles), 08
(split_k) and 09 (stream_k) also at shapes that take each branch of 07 and 08's plan (persistent_ws::plan_for, 132 SMs):
  256^3, 1000^3, 1024^3          128 x 64 tiles (07 and 08 alike)
  1024 x 2048 x 512              128 x 128 tiles
  2048^3                         128 x 256 tiles, 05's path
  1 x 4096 x 4096                128 x 128 tiles, K in 4 slices (08; 07: 128 x 128 whole)
  16 x 1024 x 4096               128 x 64 tiles, K in 8 slices (08)
  8 x 512 x 832                  13 k tiles in 8 uneven slices, the last k tile partial (08)
and 09 (stream_k) also where its plan shares k tiles among the blocks (132 SMs):
  16 x 14336 x 4096              128 x 256 tiles, all 56 of them stream-K (fewer tiles than blocks), 4 segments a tile
  1 x 4096 x 4096                128 x 128 tiles, all stream-K, up to 5 segments a tile
  128 x 4096 x 4096              128 x 64 tiles, all stream-K
  3000 x 2056 x 2048             128 x 256: one whole wave, then 84 tiles stream-K (M and N tails)
  3000 x 3000 x 2048             128 x 128: four whole waves, then 48 tiles stream-K
  2500 x 1000 x 2048             128 x 128: one whole wave, then 28 tiles stream-K, up to 6 segments a tile
  2500 x 1000 x 1000             128 x 64: two whole waves, then 56 tiles stream-K (K off 64: the last k tile partial)
Stage 10 (swap_ab) at every branch of its own plan (swap_ab::plan_for, 132 SMs) and of its rule (16 tokens a tile to M = 16, else 64):
  1 x 4096 x 4096 (TAILS)        16 tokens x 128 features, K in 4 slices
  3 x 1024 x 4096                16 x 64 (one consumer warpgroup), K in 8 slices
  16 x 14336 x 4096              16 x 128, whole K
  64 x 4096 x 4096               64 x 128, K in 4 slices
  40 x 14336 x 832               64 x 128, whole K
  17 x 520 x 832                 64 tokens (17 of them real), N off the 64-feature panel, 13 k tiles
  65 x 14336 x 4096              two tiles of 64 tokens x 128, whole K
  100 x 520 x 4104               2 tiles of 64 tokens x 64, K in 6 slices
  129 x 520 x 4104 (TAILS)       3 tiles of 64 tokens x 64, K in 4 slices
Stages 11 (host_plan) and 12 (tma_store) at every branch of their plan (kernels/hopper_d/host_plan.py, made on the
host, 132 SMs): 09's PLAN_BRANCHES and STREAM_K_BRANCHES above, where it chooses as 09 does (tests/test_host_plan.py),
with the workspace sized from the plan: where nothing is shared (1024^3, 2048^3, 16 x 1024 x 4096, ...) W is empty, a
null pointer, so a stray write faults the cell; 3000 x 2056 x 2048 needs 3 planes, 2500 x 1000 x 2048 7. 12 stores
whole tiles by TMA (clipped at M and N: 1000^3, 3000 x 2056, the M = 1 to 129 tails) and stream-K's fixed-up tiles
from registers (STREAM_K_BRANCHES mix both).
Stage 13 (swap_plan) at every branch of its host plan (kernels/hopper_d/swap_plan.py, 132 SMs; tests/test_walkd_swap_plan.py
checks the choices): SWAP_PLAN_SHAPES, each of 16, 64 and 128 tokens a tile by 64 and 128 features, with K whole and
in slices, at odd M, N off the 64-feature box and K off the 64-deep k tile; and past 128 tokens 12's path over
TMA_A128, in whole waves and stream-K, once (200 x 8 x 832) on a grid larger than 12's (13 blocks where 12 has 2).
Stage 14 (cluster_pair) at every branch of its host plan (kernels/hopper_d/cluster_plan.py, 132 SMs;
tests/test_walkd_cluster_plan.py checks the choices): CLUSTER_PAIR_SHAPES, K halved between a cluster's two CTAs in
128 x 128 and 128 x 64 tiles (one round and two, an odd count of k tiles, one k tile each, odd M, K off 64), and 13's
branches run in clusters of 2: the swapped product at 16, 64 and 128 tokens, 12's whole waves (one and two, M, N and K
tails, once on a grid of 14, 13's 13 rounded up) and stream-K.
Stage 15 (dependent_launch), 12 as a programmatic dependent launch, at 11's and 12's branches; its timed batches are
graphs of back-to-back launches with programmatic edges, and at ODD_N each launch follows the harness's padding copy
of B, a kernel writing what it reads, so a load before griddepcontrol.wait would fail the post-timing check. Stage 16 (priced_plan), 15 on its own plan, at
the same shapes: whole tiles where 12 shares k tiles but where sharing saves whole waves (1 x 4096 x 4096, 3000 x 3000
x 2048 and 2500 x 1000 x 2048 stay shared; tests/test_host_plan.py checks its choices). Stage 17 (half_tiles) at
every branch of its host plan (kernels/hopper_d/host_plan.py; tests/test_walkd_half_plan.py checks the choices):
HALF_TILES_SHAPES, whole 64-row tiles of 64 (one consumer warpgroup), 128 and 256 columns, in one wave and several,
and 16's 128-row path whole and shared. Stage 19 (lean_k_loop), 17 with its k loop's state carried, at the same shapes.
Stage 20 (tall_tiles) at the same shapes (its plan is 19's there) and at TALL_TILES_SHAPES, where it runs 256 x 192
tiles: one wave and several, 16's stream-K (six segments a tile), stream-K in ranges of a half, third and quarter of a
tile, odd M, N off the tile, K off 64, and 8192^3. Stage 21 (tile_order) at all of 20's shapes: its plan's group
heights there (8, 11, 16), several units a block walking k in turns, 64-, 128- and 256-row tiles, stream-K. Stage 22
(mixed_tiles) at all of 20's shapes, four of which its plan mixes 256 x 192 and 128 x 256 tiles at (SPANS 1, 5, 6: M,
N and K off the tiles, a part-filled last column of wide tiles), and at MIXED_TILES_SHAPES (4096^3 among them). Stages
23 (tail_halves) and 24 (evict_first_c, 23 with C stored evict-first) at all of 22's shapes (8192^3: ten waves of tall
tiles, then 112 halves of 128 rows) and at HALVES_SHAPES: a whole wave then halves, all halves, halves past M left out.
Each cell's post-timing check runs the last timed batch again on fresh inputs, so split-K's and stream-K's arrival
counters must be back at zero after every launch. Every stage also at N not a multiple of 8 (ODD_N: a decode step
against 4097 features, odd M, N and K off the tiles, N of 5), which the harness runs padded (farm/measure/padding.py:
B copied into a zero-padded K x roundup(N, 8) buffer, C out of a padded one, inside the timed launch), its row saying
so; the post-timing check then also proves that each timed launch re-packs B from the fresh inputs. K not a multiple
of 8 is skipped with the reason (TMA's 16-byte strides).
Run with `pytest -m gpu`; skipped cleanly without a GPU, and every cell skips with its reason off sm_90.
"""

import pytest

from farm.cells import Cell
from kernels.registry import catalog

pytestmark = pytest.mark.gpu

WALK_D = [s.name for s in catalog() if s.family == "hopper_d"]
PER_SHAPE = [n for n in WALK_D if n.startswith(("d_narrow_tiles_", "d_split_k_", "d_stream_k_"))]
STREAM_K = [n for n in WALK_D if n.startswith("d_stream_k_")]
SWAP_AB = [n for n in WALK_D if n.startswith("d_swap_ab_")]
HOST_PLAN = [
    n for n in WALK_D if n.startswith(("d_host_plan_", "d_tma_store_", "d_dependent_launch_", "d_priced_plan_"))
]
SWAP_PLAN = [n for n in WALK_D if n.startswith(("d_swap_plan_", "d_swap_dependent_"))]
CLUSTER_PAIR = [n for n in WALK_D if n.startswith("d_cluster_pair_")]
MIXED_TILES = [n for n in WALK_D if n.startswith(("d_mixed_tiles_", "d_tail_halves_", "d_evict_first_c_"))]
TALL_TILES = [n for n in WALK_D if n.startswith(("d_tall_tiles_", "d_tile_order_"))] + MIXED_TILES
HALF_TILES = [n for n in WALK_D if n.startswith(("d_half_tiles_", "d_lean_k_loop_"))] + TALL_TILES
HALVES = [n for n in WALK_D if n.startswith(("d_tail_halves_", "d_evict_first_c_"))]
TAILS = [(1, 4096, 4096), (3, 8, 8), (129, 520, 4104)]
ODD_N = [(1, 4097, 4096), (127, 255, 40), (4097, 4097, 4104), (3, 5, 8)]
PLAN_BRANCHES = [
    (256, 256, 256),
    (1000, 1000, 1000),
    (1024, 1024, 1024),
    (1024, 2048, 512),
    (2048, 2048, 2048),
    (16, 1024, 4096),
    (8, 512, 832),
]
SWAP_BRANCHES = [
    (3, 1024, 4096),
    (16, 14336, 4096),
    (64, 4096, 4096),
    (40, 14336, 832),
    (17, 520, 832),
    (65, 14336, 4096),
    (100, 520, 4104),
]


@pytest.fixture(scope="module")
def measurer():
    from test_gpu import QUICK

    from farm.measure.gpu import GpuMeasurer

    return GpuMeasurer(options=QUICK)


def _ok_or_not_hopper(row: dict) -> bool:
    """True when the cell ran and must be checked; False when this GPU is no sm_90 (every walk-D cell skips)."""
    if row["status"] == "skipped" and "needs sm_90a" in (row["status_reason"] or ""):
        return False
    assert row["status"] == "ok", (row["stage"], row["status"], row["status_reason"])
    assert row["verified"] and row["mismatches"] == 0 and row["max_scaled_error"] <= 1.0, row
    assert row["post_checked"] and row["local_bytes"] == 0
    return True


@pytest.mark.parametrize("shape", TAILS, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", WALK_D)
def test_every_walk_d_stage_runs_m_n_and_k_tails(measurer, stage, shape):
    _ok_or_not_hopper(measurer.measure(Cell(stage, *shape), "gpu-walkd-shapes"))


@pytest.mark.parametrize("shape", ODD_N, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", WALK_D)
def test_every_walk_d_stage_runs_odd_n_padded(measurer, stage, shape):
    row = measurer.measure(Cell(stage, *shape), "gpu-walkd-shapes")
    if _ok_or_not_hopper(row):
        padded = -(-shape[1] // 8) * 8
        assert row["status_reason"].startswith(f"ran at N={padded}: B copied into a zero-padded K x {padded}"), row


@pytest.mark.parametrize("shape", PLAN_BRANCHES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", PER_SHAPE)
def test_per_shape_stages_verify_on_every_branch_of_their_plan(measurer, stage, shape):
    row = measurer.measure(Cell(stage, *shape), "gpu-walkd-shapes")
    if _ok_or_not_hopper(row) and stage.startswith("d_split_k_") and shape == (16, 1024, 4096):
        assert row["grid_blocks"] == 128, row["grid_blocks"]  # 16 tiles x 8 slices


STREAM_K_BRANCHES = [
    (16, 14336, 4096),
    (1, 4096, 4096),
    (128, 4096, 4096),
    (3000, 2056, 2048),
    (3000, 3000, 2048),
    (2500, 1000, 2048),
    (2500, 1000, 1000),
]


@pytest.mark.parametrize("shape", STREAM_K_BRANCHES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", STREAM_K)
def test_stream_k_verifies_where_its_plan_shares_k_tiles(measurer, stage, shape):
    _ok_or_not_hopper(measurer.measure(Cell(stage, *shape), "gpu-walkd-shapes"))


@pytest.mark.parametrize("shape", SWAP_BRANCHES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", SWAP_AB)
def test_swap_ab_verifies_swapped_and_on_08s_path(measurer, stage, shape):
    _ok_or_not_hopper(measurer.measure(Cell(stage, *shape), "gpu-walkd-shapes"))


# 13's plan on 132 SMs: (TN, BNT, SLICES) swapped, (0, WIDTH, SK) on 12's path
SWAP_PLAN_SHAPES = {
    (3, 520, 40): (16, 64, 1),
    (1, 200, 832): (16, 64, 5),
    (16, 14336, 832): (16, 128, 1),
    (1, 4096, 4104): (16, 128, 4),
    (40, 520, 40): (64, 64, 1),
    (17, 520, 832): (64, 64, 7),
    (33, 14336, 832): (64, 128, 1),
    (64, 4096, 4096): (64, 128, 4),
    (100, 520, 40): (128, 64, 1),
    (127, 264, 832): (128, 64, 5),
    (128, 1024, 4096): (128, 64, 8),
    (65, 14336, 832): (128, 128, 1),
    (128, 4096, 4104): (128, 128, 4),
    (129, 4096, 4096): (0, 64, 0),
    (200, 8, 832): (0, 64, 2),
    (3000, 2056, 2048): (0, 256, 84),
    (2500, 1000, 1000): (0, 64, 56),
}


# 14's plan on 132 SMs: ("split", width) or 13's branch as SWAP_PLAN_SHAPES writes it
CLUSTER_PAIR_SHAPES = {
    (128, 8192, 8192): ("split", 128),  # one round of 64 tiles
    (100, 14336, 4104): ("split", 128),  # 112 tiles: two rounds, odd M, K off 64
    (128, 8192, 520): ("split", 128),  # 9 k tiles: 4 and 5
    (128, 8192, 128): ("split", 128),  # one k tile each
    (65, 14336, 832): ("split", 128),
    (128, 4096, 4096): ("split", 64),
    (100, 4000, 4104): ("split", 64),
    (1024, 1024, 1024): (0, 64, 0),
    (1000, 960, 1000): (0, 64, 0),
    (1024, 1024, 64): (0, 64, 0),
    (3000, 264, 1000): (0, 64, 0),  # two waves
    (200, 8, 832): (0, 64, 0),  # a grid of 14 (7 clusters), 13 rounded up
    (1, 4096, 4104): (16, 128, 4),
    (17, 520, 832): (64, 64, 7),
    (128, 1024, 4096): (128, 64, 8),
    (65, 4096, 64): (128, 64, 1),
    (2048, 2048, 2048): (0, 256, 0),
    (2500, 1000, 1000): (0, 64, 56),
}


# 17's plan on 132 SMs: (ROWS, WIDTH, tiles shared): 64-row tiles at each width (one wave and several, odd M, N off
# the tile, K off 64), 16's 128-row path whole and shared
HALF_TILES_SHAPES = {
    (1024, 512, 3584): (64, 64, 0),  # the k/v projection: 128 tiles of 64 x 64, one consumer warpgroup
    (127, 520, 1032): (64, 64, 0),
    (200, 8, 832): (64, 64, 0),  # a grid of 4
    (16, 14336, 264): (64, 128, 0),
    (33, 14336, 1032): (64, 128, 0),
    (1, 28672, 264): (64, 256, 0),
    (320, 28672, 264): (64, 256, 0),  # 560 tiles: four waves and a part
    (33, 57344, 40): (64, 256, 0),
    (65, 8200, 264): (128, 64, 0),
    (65, 14336, 264): (128, 128, 0),
    (2048, 2048, 2048): (128, 256, 0),
    (100, 2056, 4104): (128, 64, 33),
    (3000, 3000, 2048): (128, 128, 48),
}

# 20's plan on 132 SMs where it takes 256 x 192 tiles: (ROWS, WIDTH, tiles shared)
TALL_TILES_SHAPES = {
    (1544, 3024, 520): (256, 192, 0),  # one wave of 112 tiles, M and N off the tile, K off 64
    (8000, 8000, 1032): (256, 192, 0),  # 1344 tiles: ten waves and a part
    (3624, 7024, 4104): (256, 192, 27),  # four whole waves, then 27 tiles stream-K, six segments a tile
    (8192, 8192, 8192): (256, 192, 66),  # the cube: 1310 tiles whole, then 66 tiles stream-K, half a tile a block
    (4352, 2048, 8192): (256, 192, 66),  # 121 tiles whole (one wave, part full), 66 shared, half a tile a block
    (2560, 5120, 12288): (256, 192, 44),  # 226 whole, 44 shared, a third of a tile a block
    (1280, 5120, 16384): (256, 192, 33),  # 102 whole, 33 shared, a quarter of a tile a block
}

# 22's plan on 132 SMs where it mixes the tiles: SPANS, the spans of 768 columns in 256 x 192 tiles
MIXED_TILES_SHAPES = {
    (4096, 4096, 4096): 4,  # 256 tall tiles and 128 wide ones: each block two and one
    (4095, 4096, 4104): 4,  # M off both tiles' rows, K off 64
    (4096, 3840, 4096): 3,  # the wide tiles over 1536 columns
    (4096, 3328, 1000): 1,  # one span beside 10 wide tiles across; 16 k tiles, the last partial
}

# 23's plan on 132 SMs where it cuts the last part-filled round's tall tiles in halves of 128 rows: DP, those walked whole
HALVES_SHAPES = {
    (3000, 3000, 4104): 132,  # one whole wave, then 44 tiles as 88 halves; M and N off the tiles, K off 64
    (1100, 2048, 1024): 0,  # 55 tiles, all in halves; the last tile row's second halves past M, left out
    (384, 6000, 520): 0,  # two tile rows, the second a half high; N off the tile, K off 64
}

# Each host-planned stage at every branch of its plan, with no spill
PLANNED = [
    (stage, shape)
    for stages, shapes in [
        (HOST_PLAN, PLAN_BRANCHES + STREAM_K_BRANCHES),
        (SWAP_PLAN, SWAP_PLAN_SHAPES),
        (CLUSTER_PAIR, CLUSTER_PAIR_SHAPES),
        (HALF_TILES, HALF_TILES_SHAPES),
        (TALL_TILES, TALL_TILES_SHAPES),
        (MIXED_TILES, MIXED_TILES_SHAPES),
        (HALVES, HALVES_SHAPES),
    ]
    for stage in stages
    for shape in shapes
]


@pytest.mark.parametrize("stage, shape", PLANNED, ids=lambda v: v if isinstance(v, str) else "x".join(map(str, v)))
def test_host_planned_stages_verify_on_every_branch_of_their_plan(measurer, stage, shape):
    row = measurer.measure(Cell(stage, *shape), "gpu-walkd-shapes")
    if _ok_or_not_hopper(row):
        assert row["spill_bytes"] == 0


@pytest.mark.parametrize("shape", [(64, 64, 100), (3, 5, 7)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", ["d_tma_bf16", "d_split_k_fp16"])
def test_k_off_a_multiple_of_8_is_skipped_with_the_reason(measurer, stage, shape):
    row = measurer.measure(Cell(stage, *shape), "gpu-walkd-shapes")
    assert row["status"] == "skipped", row["status"]
    assert "not a multiple of 8" in row["status_reason"] or "needs sm_90a" in row["status_reason"], row["status_reason"]
