"""cuBLAS baselines through CuPy's cublasGemmEx binding, row-major by operand swap.

Row-major C = A.B is column-major C^T = B^T.A^T, and a row-major matrix read as
column-major is its transpose: so we call gemmEx(N, M, K, B, A) with no transposes.
"""
from __future__ import annotations

import numpy as np

# cublasComputeType_t values (cublas_api.h)
COMPUTE_TYPES = {"CUBLAS_COMPUTE_32F": 68, "CUBLAS_COMPUTE_32F_FAST_TF32": 77}
# cudaDataType_t per input precision
_DATA_TYPES = {"fp32": 0, "tf32": 0, "fp16": 2, "bf16": 14}  # TF32 is FP32 storage, a compute mode
_CUBLAS_OP_N = 0
_CUBLAS_GEMM_DEFAULT = -1
_CUBLAS_DEFAULT_MATH = 0


class Gemm:
    """C (fp32, row-major MxN) = A (MxK) . B (KxN) with cuBLAS on the current device."""

    def __init__(self, compute_type: str, dtype: str):
        import cupy
        from cupy_backends.cuda.libs import cublas

        self._cublas = cublas
        self._handle = cupy.cuda.device.get_cublas_handle()
        # No silent tensor-core downgrade: only the compute type we name decides precision.
        cublas.setMathMode(self._handle, _CUBLAS_DEFAULT_MATH)
        self.compute = COMPUTE_TYPES[compute_type]
        self.in_type = _DATA_TYPES[dtype]
        # Host scalars must outlive every (possibly graph-captured) call.
        self._alpha = np.array(1.0, dtype=np.float32)
        self._beta = np.array(0.0, dtype=np.float32)

    def __call__(self, a, b, c, m: int, n: int, k: int) -> None:
        import cupy

        self._cublas.setStream(self._handle, cupy.cuda.get_current_stream().ptr)
        self._cublas.gemmEx(
            self._handle, _CUBLAS_OP_N, _CUBLAS_OP_N, n, m, k,
            self._alpha.ctypes.data, b.data.ptr, self.in_type, n,
            a.data.ptr, self.in_type, k,
            self._beta.ctypes.data, c.data.ptr, _DATA_TYPES["fp32"], n,
            self.compute, _CUBLAS_GEMM_DEFAULT,
        )
