"""Vendor baselines, one per library and precision class; every kernel's % is against its own class.

cuBLAS (cublasGemmEx) and cuBLASLt (cublasLtMatmul with its heuristic's best algorithm, what
PyTorch calls) with FP32 output; `dtype` is the input precision and `cublas_compute` the compute
type, so TF32 is never mistaken for FP32. Both go through nvmath-python's bindings and are timed
as CUDA graphs like our kernels (farm/measure/cublas.py). The optional PyTorch and Triton baselines
(farm/measure/extra_baselines.py) follow them: skipped, with the reason, on hosts without those libraries.
"""
from farm.measure.extra_baselines import EXTRA_BASELINES
from kernels.registry import Stage

# (dtype, compute type, min compute capability, what the inputs and compute are)
_PRECISIONS = (
    ("fp32", "CUBLAS_COMPUTE_32F", 50, "FP32 in/out, CUBLAS_COMPUTE_32F"),
    ("tf32", "CUBLAS_COMPUTE_32F_FAST_TF32", 80, "FP32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores, TF32 inputs)"),
    ("fp16", "CUBLAS_COMPUTE_32F", 70, "FP16 in, FP32 out, CUBLAS_COMPUTE_32F"),
    ("bf16", "CUBLAS_COMPUTE_32F", 80, "BF16 in, FP32 out, CUBLAS_COMPUTE_32F"),
)
_LIBRARIES = (
    ("cublas", "cuBLAS", 0, "cublasGemmEx"),
    ("cublaslt", "cuBLASLt", 4, "cublasLtMatmul, heuristic's best algorithm"),
)


def _baseline(prefix: str, library: str, first: int, call: str, i: int, dtype: str, compute: str, min_cc: int, what: str) -> Stage:
    name = f"{prefix}_{dtype}"
    return Stage(name=name, family="baseline", walk="-", group="baseline", position=first + i, source="", launches=(),
                 what_changed=f"{call}, {what}, row-major by operand swap", dtype=dtype, baseline=name,
                 cublas_compute=compute, min_cc=min_cc, library=library)


VENDOR_BASELINES = [_baseline(*lib, i, *precision) for lib in _LIBRARIES for i, precision in enumerate(_PRECISIONS)]
CUBLAS_BASELINES = [s for s in VENDOR_BASELINES if s.library == "cuBLAS"]

BASELINES = [*VENDOR_BASELINES, *EXTRA_BASELINES]
