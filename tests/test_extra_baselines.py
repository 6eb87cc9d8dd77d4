"""Optional PyTorch / Triton baselines: their entries, stated precisions, TF32 switch and skip reasons (no GPU)."""

import sys
import types

import pytest

from farm.measure import extra_baselines as eb
from farm.measure.cublas import Unavailable
from kernels.baselines import EXTRA_BASELINES
from kernels.registry import stage_named
from kernels.stage import Baseline


def test_entries_state_library_and_precision():
    by_name = {s.name: s for s in EXTRA_BASELINES}
    assert set(by_name) == {
        "torch_fp32",
        "torch_tf32",
        "torch_fp16",
        "torch_bf16",
        "triton_fp32",
        "triton_fp16",
        "triton_bf16",
        "torch_fp8_e4m3",
        "torch_fp8_e4m3_e5m2",
    }
    for s in EXTRA_BASELINES:
        assert isinstance(s, Baseline) and s.is_baseline and s.family == "baseline" and s.group == "baseline_extra"
        assert s.baseline == s.name  # its own baseline, like the cuBLAS entries
        assert s.library in eb.LIBRARIES and s.compute_type
        d = s.describe()
        assert d["library"] == s.library and d["compute_type"] == s.compute_type and d["dtype"] == s.dtype
    assert "TF32 off" in by_name["torch_fp32"].compute_type and by_name["torch_fp32"].dtype == "fp32"
    assert by_name["torch_tf32"].dtype == "tf32" and by_name["torch_tf32"].min_cc == 80
    assert "ieee" in by_name["triton_fp32"].compute_type
    assert all("FP32 out" in by_name[n].compute_type for n in ("torch_fp16", "torch_bf16", "torch_fp8_e4m3"))
    for fp8 in ("torch_fp8_e4m3", "torch_fp8_e4m3_e5m2"):
        assert "_scaled_mm" in by_name[fp8].compute_type and by_name[fp8].min_cc == 90
    assert "E5M2 B" in by_name["torch_fp8_e4m3_e5m2"].compute_type
    from kernels.registry import catalog

    names = [s.name for s in catalog()]
    # In the catalog right after the vendor (cuBLAS, cuBLASLt) entries, so an unfiltered plan runs them too.
    vendor = [f"{lib}_{p}" for lib in ("cublas", "cublaslt") for p in ("fp32", "tf32", "fp16", "bf16")] + [
        "cublaslt_fp8_e4m3",
        "cublaslt_fp8_e4m3_e5m2",
    ]
    assert names[:19] == [*vendor, *by_name]


def test_missing_libraries_give_a_skip_reason(monkeypatch):
    eb._import_reason.cache_clear()
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    monkeypatch.setitem(sys.modules, "triton", None)
    try:
        for s in EXTRA_BASELINES:
            reason = eb.unavailable_reason(s)
            assert reason and "torch is not installed" in reason, (s.name, reason)
        assert EXTRA_BASELINES[0].unsupported_reason(1024, 1024, 1024, 40).startswith("needs compute capability")
        assert eb.unavailable_reason(stage_named("cublas_fp32")) is None  # only library baselines depend on the host
        with pytest.raises(Unavailable, match="not installed"):
            eb.launcher(EXTRA_BASELINES[0], None, None, None, 1, 1, 1)
    finally:
        eb._import_reason.cache_clear()


def test_old_libraries_give_a_skip_reason(monkeypatch):
    eb._import_reason.cache_clear()
    torch = types.SimpleNamespace(__version__="2.4.1+cu121", cuda=types.SimpleNamespace(is_available=lambda: True))
    triton = types.SimpleNamespace(__version__="2.3.0")
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "triton", triton)
    try:
        by_name = {s.name: s for s in EXTRA_BASELINES}
        assert eb.unavailable_reason(by_name["torch_fp32"]) is None
        assert "older than 2.8" in eb.unavailable_reason(by_name["torch_fp16"])
        assert "older than 2.5 (needed: torch._scaled_mm" in eb.unavailable_reason(by_name["torch_fp8_e4m3"])
        assert "triton 2.3.0 is older than 3.0" in eb.unavailable_reason(by_name["triton_bf16"])
    finally:
        eb._import_reason.cache_clear()


def test_tf32_switch_is_set_explicitly():
    legacy = types.SimpleNamespace(
        backends=types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=True)))
    )
    eb._set_tf32(legacy, False)
    assert legacy.backends.cuda.matmul.allow_tf32 is False
    new = types.SimpleNamespace(
        backends=types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(fp32_precision="tf32")))
    )
    eb._set_tf32(new, False)
    assert new.backends.cuda.matmul.fp32_precision == "ieee" and not hasattr(new.backends.cuda.matmul, "allow_tf32")
    eb._set_tf32(new, True)
    assert new.backends.cuda.matmul.fp32_precision == "tf32"


def test_version_parsing():
    assert eb._version("2.8.0+cu128") == (2, 8, 0)
    assert eb._version("3.1.0rc1") == (3, 1, 0)
    assert eb._version("2.10.0.dev20250101") == (2, 10, 0)


def test_an_fp8_kernel_whose_cublaslt_has_no_algorithm_is_measured_against_scaled_mm(monkeypatch):
    """cuBLASLt without an FP8 algorithm for a shape: the kernel's reference becomes the next FP8 library
    (torch._scaled_mm), the note saying why; both are handed the cell's scales."""
    from types import SimpleNamespace

    from farm.measure import gpu
    from kernels.registry import catalog

    calls = []

    def library_call(spec, a, b, out, m, n, k, vendor=None, scales=None):
        calls.append((spec.name, scales))
        if spec.library == "cuBLASLt":
            raise Unavailable("cuBLASLt's heuristic offers no algorithm for fp8_e4m3 4096x4096x4096")
        return "scaled_mm"

    monkeypatch.setattr(gpu, "library_call", library_call)
    host = SimpleNamespace(_stages={s.name: s for s in catalog()}, _vendor_context=lambda: None)
    spec, run, note = gpu.GpuMeasurer._baseline_call(
        host, stage_named("f_wgmma_fp8"), None, None, None, 4096, 4096, 4096, "scales"
    )
    assert spec.name == "torch_fp8_e4m3" and run == "scaled_mm"
    assert note == "cublaslt_fp8_e4m3 unavailable: cuBLASLt's heuristic offers no algorithm for fp8_e4m3 4096x4096x4096"
    assert calls == [("cublaslt_fp8_e4m3", "scales"), ("torch_fp8_e4m3", "scales")]
