"""On an sm_90 GPU: walk D 11 (d_host_plan) on every branch of its host plan, verified against cuBLAS with C poisoned.

The plan (kernels/hopper_d/host_plan.py) is made once per cell on the host and passed as WIDTH, DP and SK; the
workspace W is sized from it, so where nothing is shared W is empty (a null pointer: a stray write faults the cell).
Branches on an H100's 132 SMs (tests/test_host_plan.py checks the choices on the CPU):
  1024^3, 1000^3, 256^3          128 x 64 tiles, one wave, no workspace
  1024 x 2048 x 512              128 x 128 tiles, whole waves
  2048^3                         128 x 256 tiles, one wave (05's tiles), no workspace
  16 x 1024 x 4096               128 x 64, whole K (a grid of 128 blocks)
  16 x 14336 x 4096              128 x 256, all 56 tiles stream-K, 4 planes
  1 x 4096 x 4096                128 x 128, all stream-K, 6 planes
  128 x 4096 x 4096              128 x 64, all stream-K
  3000 x 2056 x 2048             128 x 256: one whole wave, then 84 tiles stream-K (M and N tails)
  3000 x 3000 x 2048             128 x 128: four whole waves, then 48 tiles stream-K
  2500 x 1000 x 2048             128 x 128: one whole wave, then 28 tiles stream-K, 7 planes
  2500 x 1000 x 1000             128 x 64: two whole waves, then 56 tiles stream-K (K off 64: the last k tile partial)
  8 x 512 x 832                  all stream-K, 13 k tiles, the last partial
On another GPU the measurer plans for its own SM count, so the branches differ but every cell must still verify.
Each cell's post-timing check runs the last timed batch again on fresh inputs, so the arrival counters must be back
at zero after every launch. Run with `pytest -m gpu`; every cell skips with its reason off sm_90.
"""

import pytest

from farm.cells import Cell
from kernels.registry import catalog

pytestmark = pytest.mark.gpu

HOST_PLAN = [s.name for s in catalog() if s.name.startswith("d_host_plan_")]
BRANCHES = [
    (1024, 1024, 1024),
    (1000, 1000, 1000),
    (256, 256, 256),
    (1024, 2048, 512),
    (2048, 2048, 2048),
    (16, 1024, 4096),
    (16, 14336, 4096),
    (1, 4096, 4096),
    (128, 4096, 4096),
    (3000, 2056, 2048),
    (3000, 3000, 2048),
    (2500, 1000, 2048),
    (2500, 1000, 1000),
    (8, 512, 832),
]


@pytest.fixture(scope="module")
def measurer():
    from test_gpu import QUICK

    from farm.measure.gpu import GpuMeasurer

    return GpuMeasurer(options=QUICK)


@pytest.mark.parametrize("shape", BRANCHES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", HOST_PLAN)
def test_host_plan_verifies_on_every_branch_of_its_plan(measurer, stage, shape):
    row = measurer.measure(Cell(stage, *shape), "gpu-host-plan")
    if row["status"] == "skipped" and "needs sm_90a" in (row["status_reason"] or ""):
        return
    assert row["status"] == "ok", (row["stage"], row["status"], row["status_reason"])
    assert row["verified"] and row["mismatches"] == 0 and row["max_scaled_error"] <= 1.0, row
    assert row["post_checked"] and row["local_bytes"] == 0 and row["spill_bytes"] == 0
