"""On a real GPU: `farm crosscheck --stages`. The stage call handed to the outside timer is the cell's kernel on
verified inputs, it launches on whatever stream is current (so do_bench_cudagraph's capture records it), and the
alternated ratio is made of real timings. Run with `pytest -m gpu`; skipped cleanly without a GPU."""

import pytest

pytestmark = pytest.mark.gpu

STAGE = "d_tall_tiles_bf16"


@pytest.fixture(scope="module")
def measurer():
    from test_gpu import QUICK

    from farm.measure.gpu import GpuMeasurer

    return GpuMeasurer(options=QUICK)


@pytest.mark.parametrize("shape", [(1024, 1024, 1024), (1000, 1032, 1048)], ids=lambda s: "x".join(map(str, s)))
def test_the_standalone_stage_is_verified_and_writes_c_on_the_current_stream(measurer, shape):
    import cupy

    from farm.measure.tolerance import tolerance

    calls = measurer.standalone(STAGE, *shape)
    assert calls["verified"] and calls["baseline_name"] == "cublas_bf16", calls["check"]
    _, _, _, c, ref, _ = calls["keep"]
    checks = measurer._loaded_checks()
    with cupy.cuda.Stream(non_blocking=True) as side:  # not the default stream: the call follows the current one
        checks.poison(c)
        calls["stage"]()
        side.synchronize()
        assert checks.compare(c, ref, tolerance("bf16", shape[2]))["verified"]


def test_a_baseline_has_no_standalone_stage(measurer):
    with pytest.raises(ValueError, match="is a baseline"):
        measurer.standalone("cublas_bf16", 256, 256, 256)


def test_stage_crosscheck_times_the_kernel_by_both_harnesses(measurer):
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    from farm.analysis.crosscheck import stage_crosscheck
    from farm.data.peak import peak_tflops

    (record,) = stage_crosscheck([STAGE], [(2048,) * 3], pairs=2, measurer=measurer)
    assert record["verified"] and record["farm_status"] == "ok" and record["farm_pct"] > 0
    assert record["do_bench_pct_low"] <= record["do_bench_pct"] <= record["do_bench_pct_high"]
    # what a graph that captured no launch would read (near zero) is below what the chip's dense peak allows
    import pynvml

    pynvml.nvmlInit()
    info = measurer.device_info()
    handle = pynvml.nvmlDeviceGetHandleByIndex(info["gpu_index"])
    max_clock = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)
    peak = peak_tflops(info["arch"], "bf16", info["sm_count"], max_clock, info["gpu_name"])
    for side in ("stage_ms", "baseline_ms"):
        assert record[side] * 1e-3 >= 2 * 2048**3 / (1.05 * peak * 1e12), record


@pytest.mark.parametrize("precision", ["bf16", "fp16", "tf32"])
def test_the_follow_up_times_the_farms_cublas_on_torchs_own_operands(measurer, precision):
    """farm crosscheck's follow-up: the farm's cuBLAS call reads torch's A and B (BF16 as uint16 bits), its C checked
    against torch.mm's, both timed for real; a torch side that writes a wrong C leaves no ratio."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    from farm.analysis.crosscheck import _graph_bench, _torch_call, shared_operands_ratio

    run, operands = _torch_call(precision, 1000, 1032, 1048)
    ratio = shared_operands_ratio(measurer, _graph_bench(20), precision, run, operands)
    assert ratio is not None and 0 < ratio < float("inf")
    c = operands[2]
    assert shared_operands_ratio(measurer, _graph_bench(20), precision, lambda: c.fill_(1.0), operands) is None


def test_the_follow_up_takes_library_baselines_only(measurer):
    with pytest.raises(ValueError, match="not a 16- or 32-bit baseline"):
        measurer.library_against("d_tall_tiles_bf16", None, None, None, 256, 256, 256)
