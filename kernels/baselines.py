"""cuBLAS baselines, one per precision class; every kernel's % is against its own class.

All go through cublasGemmEx with FP32 output; `dtype` is the input precision and
`cublas_compute` the compute type, so TF32 is never mistaken for FP32. The optional
PyTorch and Triton baselines (farm/measure/extra_baselines.py) follow them: skipped, with the
reason, on hosts without those libraries.
"""
from farm.measure.extra_baselines import EXTRA_BASELINES
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

BASELINES = [*CUBLAS_BASELINES, *EXTRA_BASELINES]
