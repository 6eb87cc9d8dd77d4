"""On a real GPU: a paired cell (GpuMeasurer.measure_pair) times both arms in one timing, each verified, and sets the
arms up (module load, output, library plan) in an order drawn per pair, recorded in `loaded_first`.

Run with `pytest -m gpu`; skipped cleanly where no GPU is present.
"""

import pytest

from farm.cells import Cell

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def measurer():
    from farm.measure.gpu import GpuMeasurer
    from tests.test_gpu import QUICK

    return GpuMeasurer(options=QUICK)


@pytest.mark.parametrize("stage", ["tiled", "cublas_fp32"])
def test_pairs_time_both_arms_and_draw_which_is_set_up_first(measurer, stage):
    firsts = set()
    for repeat in range(8):  # both orders among 8 draws, but with probability 2 ** -7
        a, b = measurer.measure_pair(Cell(stage, 256, 256, 256, repeat), ("t-a", "t-b"))
        assert (a["status"], b["status"]) == ("ok", "ok"), (a["status_reason"], b["status_reason"])
        assert a["verified"] and b["verified"] and a["post_checked"] and b["post_checked"]
        assert (a["timestamp"], a["batches"]) == (b["timestamp"], b["batches"])  # one timing
        assert a.get("code_sha256") == b.get("code_sha256")  # identical code (none on a library row)
        assert a["loaded_first"] == b["loaded_first"] in ("a", "b")
        firsts.add(a["loaded_first"])
    assert firsts == {"a", "b"}
    assert measurer.measure(Cell(stage, 256, 256, 256), "t")["loaded_first"] is None  # one arm: nothing to draw
