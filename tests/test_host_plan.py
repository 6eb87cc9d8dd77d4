"""Walk D 11's and 12's host plan (kernels/hopper_d/host_plan.py): its choices on an H100's 132 SMs, the schedule the
kernel walks from it (replayed here as kernels/common/stream_k.cuh's Schedule computes it), and the workspace it
sizes; 12's tensor map over C."""

from functools import partial

import h100_plans
import numpy as np
import pytest
from h100_plans import H100_SMS, shape_id

from farm.measure import tma
from farm.measure.sizing import bytes_needed
from kernels.hopper_d.host_plan import BK, BM, MAX_SEGMENTS, plan
from kernels.registry import catalog
from kernels.stage import cdiv

STAGES = {s.name: s for s in catalog()}
HOST_PLAN = STAGES["d_host_plan_bf16"]
blocks = partial(h100_plans.blocks, HOST_PLAN.launches[0])


# (m, n, k) -> (width, tiles walked whole, tiles shared), on an H100: the square sizes of the README, and the shapes
# tests/test_gpu_walkd_shapes.py runs 09 at, where 09's in-kernel plan made the same choices.
CHOICES = {
    (1024, 1024, 1024): (64, 128, 0),  # 07's 128 x 64 tiles, one wave
    (2048, 2048, 2048): (256, 128, 0),  # 05's 128 x 256 tiles
    (4096, 4096, 4096): (256, 512, 0),  # whole waves: stream-K costs the same in the model, the tie goes to them
    (8192, 8192, 8192): (256, 1980, 68),  # 15 whole waves, the last 68 tiles' k tiles shared
    (16, 14336, 4096): (256, 0, 56),
    (1, 4096, 4096): (128, 0, 32),
    (128, 4096, 4096): (64, 0, 64),
    (3000, 2056, 2048): (256, 132, 84),
    (3000, 3000, 2048): (128, 528, 48),
    (2500, 1000, 2048): (128, 132, 28),
    (2500, 1000, 1000): (64, 264, 56),
    (16, 1024, 4096): (64, 16, 0),
}


@pytest.mark.parametrize("shape", CHOICES, ids=shape_id)
def test_the_plan_at_the_readme_sizes_and_09s_branches(shape):
    p = plan(*shape, blocks(shape[0], shape[1]))
    assert (p.width, p.dp, p.sk) == CHOICES[shape]


# 16's plan (d_priced_plan: a stream-K k tile priced at STREAM_K_PRICE whole ones'): where 12 shares k tiles at the
# LLM shapes it measured slower than whole tiles (README.md, 16), it walks whole tiles; a short last wave stays shared.
PRICED = {
    (1024, 512, 3584): (64, 64, 0),  # 12: (64, 0, 64)
    (1024, 1024, 8192): (64, 128, 0),  # 12: (128, 0, 64)
    (1024, 3584, 18944): (256, 112, 0),  # 12: (256, 0, 112)
    (4096, 3584, 3584): (128, 896, 0),  # 12: (256, 396, 52)
    (8192, 8192, 8192): (256, 2048, 0),  # 12: (256, 1980, 68)
    (4096, 3584, 18944): (256, 396, 52),  # as 12
    (8192, 28672, 8192): (256, 7128, 40),  # as 12: 40 of 7168 tiles
    (1024, 1024, 1024): (64, 128, 0),  # as 12: nothing shared
}


@pytest.mark.parametrize("shape", PRICED, ids=shape_id)
def test_16s_plan_prices_stream_k_at_its_measured_cost(shape):
    launch = STAGES["d_priced_plan_bf16"].launches[0]
    assert launch.dependent and launch.plan(*shape, H100_SMS).args == dict(zip(("WIDTH", "DP", "SK"), PRICED[shape]))
    assert plan(*shape, blocks(shape[0], shape[1]), 1) == plan(*shape, blocks(shape[0], shape[1]))  # 11, 12, 15


@pytest.mark.parametrize("size", [1024, 2048, 4096])
def test_no_workspace_where_nothing_is_shared(size):
    assert HOST_PLAN.workspace_floats(size, size, size, H100_SMS) == 0
    # 09 plans in the kernel, so the harness gives it 8 planes whatever it picks
    assert STAGES["d_stream_k_bf16"].workspace_floats(size, size, size, H100_SMS) == 8 * size * size
    assert bytes_needed(HOST_PLAN, size, size, size, {"sm_count": H100_SMS}) == 4 * 4 * size * size


def test_the_workspace_holds_the_planes_the_plan_can_use():
    assert HOST_PLAN.workspace_floats(8192, 8192, 8192, H100_SMS) == 3 * 8192 * 8192
    assert HOST_PLAN.workspace_floats(1, 4096, 4096, H100_SMS) == 6 * 1 * 4096


def test_the_launch_passes_the_plan_by_name_for_the_grid_it_launches():
    launch = HOST_PLAN.launches[0]
    assert launch.args[-3:] == ("WIDTH", "DP", "SK")
    assert launch.plan(16, 1024, 4096, H100_SMS).args == {"WIDTH": 64, "DP": 16, "SK": 0}  # a grid of 128 blocks
    unplanned = [l for s in STAGES.values() if not s.is_baseline for l in s.launches if l.planner is None]
    assert unplanned and all(l.plan(64, 64, 64, H100_SMS).args == {} for l in unplanned)


def segments_walked(m: int, n: int, k: int, g: int) -> list[int]:
    """Each shared tile's segment count as the kernel's Schedule cuts its k tiles among g blocks (stream_k.cuh)."""
    p = plan(m, n, k, g)
    kt = cdiv(k, BK)
    if not p.sk:
        return []
    total = p.sk * kt
    begin = [total * b // g for b in range(g + 1)]
    assert (
        begin[0] == 0
        and begin[-1] == total
        and all(b1 - b0 in (total // g, total // g + 1) for b0, b1 in zip(begin, begin[1:]))
    )

    def holder(x: int) -> int:  # the largest b with begin(b) <= x, as Schedule::holder computes it
        b = ((x + 1) * g - 1) // total
        assert begin[b] <= x < begin[b + 1]
        return b

    return [holder(j * kt + kt - 1) - holder(j * kt) + 1 for j in range(p.sk)]


SHAPES = [
    (m, n, k) for m in (1, 16, 129, 1000, 3000, 8192) for n in (8, 520, 1000, 4096, 14336) for k in (8, 832, 4104, 8192)
]


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_every_tile_is_walked_once_within_the_planned_planes(shape):
    m, n, k = shape
    g = blocks(m, n)
    p = plan(m, n, k, g)
    tiles = cdiv(m, BM) * cdiv(n, p.width)
    assert p.dp + p.sk == tiles
    if p.sk:
        assert p.dp % g == 0 and p.sk < g  # whole waves, then fewer tiles than blocks
        assert max(segments_walked(m, n, k, g)) <= p.segments <= MAX_SEGMENTS
        assert p.sk * cdiv(k, BK) * g < 2**31  # the kernel's 32-bit range arithmetic
    assert HOST_PLAN.workspace_floats(m, n, k, H100_SMS) == (p.segments * m * n if p.sk else 0)


def test_12s_c_leaves_in_boxes_of_a_warpgroups_rows_by_one_swizzle_row(monkeypatch):
    built = {}
    monkeypatch.setattr(
        tma, "tensor_map", lambda matrix, dtype, rows, cols: built.setdefault(id(matrix), (dtype, rows, cols))
    )
    launch = STAGES["d_tma_store_bf16"].launches[0]
    a, b, c = np.zeros((300, 200), np.uint16), np.zeros((200, 104), np.uint16), np.zeros((300, 104), np.float32)
    args = tma.tensor_map_args(launch, "bf16", {"A": a, "B": b, "C": c})
    assert set(args) == {"TMA_A", "TMA_B", "TMA_C"} and launch.planner is HOST_PLAN.launches[0].planner
    assert built[id(c)] == ("fp32", 64, 32) and 32 * c.itemsize == tma.SWIZZLE_BYTES
    assert set(tma.tensor_map_args(HOST_PLAN.launches[0], "bf16", {"A": a, "B": b, "C": c})) == {"TMA_A", "TMA_B"}
