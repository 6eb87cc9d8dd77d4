"""On a real GPU: every stage verified at tile-multiple and odd shapes; timings and rows sane.

Run with `pytest -m gpu`; skipped cleanly where no GPU is present.
"""

import dataclasses
import math

import pytest

from farm.cells import Cell
from farm.measure.cell_timer import MeasureOptions
from farm.measure.stopping import StoppingRule, WarmupRule
from farm.measure.timing import TimingConfig
from kernels.baselines import EXTRA_BASELINES
from kernels.registry import catalog

pytestmark = pytest.mark.gpu

LIBRARY_BASELINES = {s.name for s in EXTRA_BASELINES}
TILE_MULTIPLE = [(256, 256, 256), (512, 768, 384), (1024, 1024, 1024)]
ODD = [(127, 255, 33), (1000, 1000, 1000), (257, 129, 520)]
QUICK = MeasureOptions(
    timing=TimingConfig(
        target_batch_ms=1,
        warmup=WarmupRule(min_s=0.01, max_s=0.5),
        stopping=StoppingRule(min_samples=3, min_time_s=0.0, max_time_s=1.0, target_noise=0.05),
    )
)


@pytest.fixture(scope="module")
def measurer():
    from farm.measure.gpu import GpuMeasurer

    return GpuMeasurer(options=QUICK)


@pytest.mark.parametrize("shape", TILE_MULTIPLE + ODD, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", [s.name for s in catalog()])
def test_stage_verifies_or_skips_with_reason(measurer, stage, shape):
    row = measurer.measure(Cell(stage, *shape), "gpu-test")
    if row["status"] == "skipped":
        assert row["status_reason"], row
        # Library baselines skip where their library is missing or too old; our kernels only on odd shapes.
        # Arch-specific stages (walk D, sm_90a) skip every shape on other chips.
        assert shape in ODD or stage in LIBRARY_BASELINES or "needs sm_90a" in row["status_reason"], (
            f"{stage} skipped a tile-multiple shape: {row['status_reason']}"
        )
        return
    assert row["status"] == "ok", (row["status"], row["status_reason"])
    assert row["verified"] and row["mismatches"] == 0 and row["max_scaled_error"] <= 1.0
    assert row["post_checked"], "the timed launch path was checked again on fresh inputs"
    assert row["limit_check"] == "peak", row["limit_check"]  # the dense peak is known for every chip the farm meets
    if row["family"] != "baseline":
        assert row["local_bytes"] == 0 and row["spill_bytes"] in (0, None), row
        assert row["registers"] > 0
    assert all(t > 0 and math.isfinite(t) for t in row["samples_ms"])
    assert row["min_ms"] <= row["median_ms"] <= row["max_ms"]
    assert row["baseline_median_ms"] > 0 and row["pct_of_baseline"] > 0
    if row["family"] != "baseline" or stage.startswith(("cublas_", "cublaslt_")):
        # Our kernels and the vendor baselines (nvmath-python) are all replayed from CUDA graphs: no direct launches.
        assert row["launch_method"] == row["baseline_launch_method"] == "cuda_graph", row["status_reason"]


@pytest.fixture(scope="module")
def cold_measurer():
    from farm.measure.gpu import GpuMeasurer

    return GpuMeasurer(options=MeasureOptions(timing=dataclasses.replace(QUICK.timing, mode="cold")))


@pytest.mark.parametrize(
    "stage", [f"{lib}_{p}" for lib in ("cublas", "cublaslt") for p in ("fp32", "tf32", "fp16", "bf16")] + ["naive"]
)
def test_cold_mode_replays_one_launch_graphs_for_vendor_baselines_and_kernels(cold_measurer, stage):
    row = cold_measurer.measure(Cell(stage, 257, 129, 520), "gpu-test")
    assert row["status"] == "ok" and row["verified"], row["status_reason"]
    assert row["timing_mode"] == "cold" and row["launches_per_batch"] == 1 and row["post_checked"]
    assert row["limit_check"] == "peak+dram", row["limit_check"]
    assert row["launch_method"] == row["baseline_launch_method"] == "cuda_graph"


def test_rows_carry_provenance(measurer):
    row = measurer.measure(Cell("cublas_fp32", 512, 512, 512), "gpu-test")
    for key in (
        "gpu_name",
        "gpu_uuid",
        "compute_capability",
        "arch",
        "sm_count",
        "driver_version",
        "cuda_runtime_version",
        "nvrtc_version",
        "cupy_version",
        "git_commit",
        "timestamp",
    ):
        assert row[key] not in (None, ""), key
    assert row["gpu_uuid"].startswith("GPU-")
    assert row["verify_reference"].startswith("fp64") and row["verified"]
    assert row["pct_of_baseline"] == pytest.approx(100 * row["baseline_median_ms"] / row["median_ms"])


def test_cublas_throughput_is_plausible(measurer):
    row = measurer.measure(Cell("cublas_fp32", 4096, 4096, 4096), "gpu-test")
    assert row["status"] == "ok"
    assert 1.0 < row["tflops"] < 120.0, row["tflops"]  # FP32 CUDA-core range of any current GPU
    assert row["cv"] < 0.1


def test_pytorch_fp32_baseline_really_runs_without_tf32(measurer):
    """Verified under the FP32 tolerance (4 eps K) at K = 2048, which TF32's 10-bit mantissa would miss."""
    pytest.importorskip("torch")
    fp32 = measurer.measure(Cell("torch_fp32", 2048, 2048, 2048), "gpu-test")
    tf32 = measurer.measure(Cell("torch_tf32", 2048, 2048, 2048), "gpu-test")
    assert fp32["status"] == "ok" and fp32["verified"], fp32["status_reason"]
    assert tf32["status"] == "ok" and tf32["verified"], tf32["status_reason"]
    assert tf32["atol"] > 10 * fp32["atol"]  # judged in its own precision class


def test_shape_too_large_is_skipped_before_allocating(measurer):
    row = measurer.measure(Cell("naive", 2**17, 2**17, 2**17), "gpu-test")
    assert row["status"] == "skipped" and "GiB" in row["status_reason"]


@pytest.mark.parametrize("stage", [s.name for s in EXTRA_BASELINES if s.library == "Triton"])
def test_triton_rows_name_the_autotuners_pick(measurer, stage):
    """Triton's autotuner picks once per process and shape, so two runs may time different configurations (issue 26:
    triton_fp16 256^3 21 % apart between two H100 runs): the row names its pick, and compare attributes the difference."""
    row = measurer.measure(Cell(stage, 1024, 1024, 1024), "gpu-test")
    if row["status"] == "skipped":
        pytest.skip(row["status_reason"])
    assert row["status"] == "ok", row["status_reason"]
    assert row["library_algorithm"].startswith("Triton ") and "autotune pick: BLOCK_M: " in row["library_algorithm"]
