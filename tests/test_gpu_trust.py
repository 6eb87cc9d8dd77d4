"""On a real GPU: what was timed is what was checked. Test-only kernels (tests/gpu_kernels/cheaters.cu, never in the
catalog) that cheat after their first launch pass the first verification but never end `ok`; the state they keep
in their module does not reach the next cell. Run with `pytest -m gpu`; skipped cleanly without a GPU."""

from pathlib import Path

import pytest

from farm.cells import Cell
from kernels.stage import Launch, Stage

pytestmark = pytest.mark.gpu

CHEATERS = Path(__file__).resolve().parent / "gpu_kernels" / "cheaters.cu"


def cheat(kernel: str, workspace: bool = False) -> Stage:
    args = ("A", "B", "C", "W", "M", "N", "K") if workspace else ("A", "B", "C", "M", "N", "K")
    return Stage(
        name=f"test_{kernel}",
        family="test_cheats",
        walk="-",
        group="ladder",
        position=1,
        source_path=CHEATERS,
        launches=(Launch(kernel, (16, 16), 16, 16, args),),
        what_changed="a planted cheat (test only)",
        workspace_floats_per_mn=1 if workspace else 0,
    )


CHEATS = (cheat("first_launch_only"), cheat("cached_result", workspace=True), cheat("half_c_later"))


@pytest.fixture(scope="module", params=["hot", "cold"])
def measurer(request):
    import dataclasses

    from test_gpu import QUICK

    from farm.measure.gpu import GpuMeasurer

    return GpuMeasurer(
        options=dataclasses.replace(QUICK, timing=dataclasses.replace(QUICK.timing, mode=request.param)),
        extra_stages=CHEATS,
    )


@pytest.mark.parametrize("stage", [s.name for s in CHEATS])
@pytest.mark.parametrize("shape", [(1024, 1024, 1024), (257, 129, 520)], ids=lambda s: "x".join(map(str, s)))
def test_a_kernel_that_cheats_after_its_first_launch_never_ends_ok(measurer, stage, shape):
    row = measurer.measure(Cell(stage, *shape), "gpu-trust")
    assert row["status"] in ("failed_verification", "implausible"), (
        row["status"],
        row.get("tflops"),
        row["status_reason"],
    )
    if row["status"] == "failed_verification":
        assert row["post_checked"] and not row["verified"] and "post-timing check failed" in row["status_reason"], row[
            "status_reason"
        ]
        assert row["mismatches"] > 0


def test_module_state_never_reaches_the_next_cell(measurer):
    """Each cell loads the stage's module afresh: a kernel that works only on its first launch passes every
    cell's first verification (it reached the timing) and fails every post-timing check, cell after cell."""
    rows = [measurer.measure(Cell("test_first_launch_only", 512, 512, 512, repeat), "gpu-trust") for repeat in range(3)]
    assert [r["status"] for r in rows] == ["failed_verification"] * 3
    assert all("post-timing check failed" in r["status_reason"] and r["batches"] for r in rows), [
        r["status_reason"] for r in rows
    ]


def test_an_honest_kernel_passes_the_post_check_and_the_limits(measurer):
    row = measurer.measure(Cell("naive", 512, 512, 512), "gpu-trust")
    assert row["status"] == "ok" and row["post_checked"] and row["verified"], row["status_reason"]
    assert row["limit_check"].startswith("peak"), row["limit_check"]
    assert row["max_sm_clock_mhz"] > 0 and row["memory_bandwidth_tbs"] > 0
