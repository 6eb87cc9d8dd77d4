"""On a real GPU: walk D's TF32 stages (kernels/hopper_tf32) at the edges test_gpu.py's shapes do not reach:
a last B panel partly past N, K ending mid-tile, a tile pair (03's clusters) whose second row lies past M,
a single k tile. `ok` and verified on an sm_90 chip, skipped with the reason elsewhere. Run with `pytest -m gpu`."""
import pytest

from farm.cells import Cell
from kernels.registry import catalog

pytestmark = pytest.mark.gpu

EDGES = [(131, 260, 4100), (300, 132, 36), (520, 1028, 68), (8, 4, 4)]


@pytest.fixture(scope="module")
def measurer():
    from test_gpu import QUICK

    from farm.measure.gpu import GpuMeasurer

    return GpuMeasurer(options=QUICK)


@pytest.mark.parametrize("shape", EDGES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", [s.name for s in catalog() if s.family == "hopper_tf32"])
def test_tf32_wgmma_stage_verifies_at_the_edges(measurer, stage, shape):
    row = measurer.measure(Cell(stage, *shape), "gpu-test")
    if row["compute_capability"] != "9.0":
        assert row["status"] == "skipped" and "needs sm_90a" in row["status_reason"], row
        return
    assert row["status"] == "ok", (row["status"], row["status_reason"])
    assert row["verified"] and row["mismatches"] == 0 and row["post_checked"]
    assert row["local_bytes"] == 0 and row["spill_bytes"] in (0, None), row
