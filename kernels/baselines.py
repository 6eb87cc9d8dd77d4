"""cuBLAS baselines, one per precision class; every kernel's % is against its own class."""
from kernels.registry import Stage

BASELINES = [
    Stage(name="cublas_fp32", family="baseline", walk="-", group="baseline", position=0, source="", launches=(),
          what_changed="cublasGemmEx, FP32 in/out, CUBLAS_COMPUTE_32F, row-major by operand swap",
          dtype="fp32", baseline="cublas_fp32", cublas_compute="CUBLAS_COMPUTE_32F", min_cc=50),
]
