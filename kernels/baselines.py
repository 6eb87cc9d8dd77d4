"""cuBLAS baselines, one per precision class; every kernel's % is against its own class.

All go through cublasGemmEx with FP32 output; `dtype` is the input precision and
`cublas_compute` the compute type, so TF32 is never mistaken for FP32. The optional
PyTorch and Triton baselines follow them: each states the precision it computes in, so a %
is never taken across precision classes. This file is what they are; how they run (and why a
host without those libraries skips them) is farm/measure/extra_baselines.py.
"""
from dataclasses import dataclass

from kernels.registry import Stage


def _baseline(position: int, name: str, dtype: str, compute: str, min_cc: int, what: str) -> Stage:
    return Stage(name=name, family="baseline", walk="-", group="baseline", position=position, source="", launches=(),
                 what_changed=what, dtype=dtype, baseline=name, cublas_compute=compute, min_cc=min_cc)


CUBLAS_BASELINES = [
    _baseline(0, "cublas_fp32", "fp32", "CUBLAS_COMPUTE_32F", 50,
              "cublasGemmEx, FP32 in/out, CUBLAS_COMPUTE_32F, row-major by operand swap"),
    _baseline(1, "cublas_tf32", "tf32", "CUBLAS_COMPUTE_32F_FAST_TF32", 80,
              "cublasGemmEx, FP32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores, TF32 inputs)"),
    _baseline(2, "cublas_fp16", "fp16", "CUBLAS_COMPUTE_32F", 70,
              "cublasGemmEx, FP16 in, FP32 out, CUBLAS_COMPUTE_32F"),
    _baseline(3, "cublas_bf16", "bf16", "CUBLAS_COMPUTE_32F", 80,
              "cublasGemmEx, BF16 in, FP32 out, CUBLAS_COMPUTE_32F"),
]

@dataclass(frozen=True)
class ExtraBaselineStage(Stage):
    """A library GEMM timed as a baseline of its own. `precision` says what it computes.

    Catalog data only: farm/measure/extra_baselines.py finds the library and launches it.
    """

    library: str = ""  # "PyTorch" | "Triton"
    precision: str = ""

    @property
    def is_baseline(self) -> bool:  # noqa: D401 - a baseline, not a compiled kernel
        return True

    def describe(self) -> dict:
        return {"name": self.name, "family": self.family, "walk": self.walk, "group": self.group,
                "position": self.position, "dtype": self.dtype, "baseline": self.baseline, "library": self.library,
                "compute_type": self.precision, "shapes": self.shapes.describe(),
                "min_compute_capability": self.min_cc / 10, "what_changed": self.what_changed, "published": None}


def _extra(position: int, name: str, library: str, dtype: str, min_cc: int, precision: str) -> ExtraBaselineStage:
    return ExtraBaselineStage(name=name, family="baseline", walk="-", group="baseline_extra", position=position, source="",
                              launches=(), what_changed=f"{library}: {precision}", dtype=dtype, baseline=name,
                              min_cc=min_cc, library=library, precision=precision)


EXTRA_BASELINES: list[ExtraBaselineStage] = [
    _extra(10, "torch_fp32", "PyTorch", "fp32", 50,
           "torch.mm, FP32 in/out, TF32 off (allow_tf32=False / fp32_precision='ieee' before every call)"),
    _extra(11, "torch_tf32", "PyTorch", "tf32", 80,
           "torch.mm on FP32 tensors with TF32 on (allow_tf32=True): what 'PyTorch FP32' often silently is"),
    _extra(12, "torch_fp16", "PyTorch", "fp16", 70, "torch.mm, FP16 in, FP32 out (out_dtype=torch.float32), FP32 accumulate"),
    _extra(13, "torch_bf16", "PyTorch", "bf16", 80, "torch.mm, BF16 in, FP32 out (out_dtype=torch.float32), FP32 accumulate"),
    _extra(14, "triton_fp32", "Triton", "fp32", 80,
           "persistent Triton matmul, FP32 in/out, tl.dot(input_precision='ieee'): no TF32"),
    _extra(15, "triton_fp16", "Triton", "fp16", 80, "persistent Triton matmul, FP16 in, FP32 accumulate and out"),
    _extra(16, "triton_bf16", "Triton", "bf16", 80, "persistent Triton matmul, BF16 in, FP32 accumulate and out"),
]

BASELINES = [*CUBLAS_BASELINES, *EXTRA_BASELINES]
