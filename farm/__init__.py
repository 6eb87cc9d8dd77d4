"""gemm-farm: a distributed benchmark farm for GEMM kernels."""

__version__ = "0.1.0"
