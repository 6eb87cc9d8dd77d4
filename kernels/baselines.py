"""Vendor baselines, one per library and precision class; every kernel's % is against its own class.

cuBLAS (cublasGemmEx) and cuBLASLt (cublasLtMatmul with its heuristic's best algorithm, what
PyTorch calls) with FP32 output; `dtype` is the input precision and `compute_type` cuBLAS's compute
type, so TF32 is never mistaken for FP32. Both go through nvmath-python's bindings and are timed
as CUDA graphs like our kernels (farm/measure/cublas.py). The optional PyTorch and Triton baselines
follow them, each stating the precision it computes in. This file is what they are; how they run,
and why a host without those libraries skips them, is farm/measure/extra_baselines.py.
"""

from kernels.stage import Baseline

# (dtype, compute type, min compute capability, what the inputs and compute are)
_PRECISIONS = (
    ("fp32", "CUBLAS_COMPUTE_32F", 50, "FP32 in/out, CUBLAS_COMPUTE_32F"),
    (
        "tf32",
        "CUBLAS_COMPUTE_32F_FAST_TF32",
        80,
        "FP32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32 (tensor cores, TF32 inputs)",
    ),
    ("fp16", "CUBLAS_COMPUTE_32F", 70, "FP16 in, FP32 out, CUBLAS_COMPUTE_32F"),
    ("bf16", "CUBLAS_COMPUTE_32F", 80, "BF16 in, FP32 out, CUBLAS_COMPUTE_32F"),
)
_LIBRARIES = (
    ("cublas", "cuBLAS", 0, "cublasGemmEx"),
    ("cublaslt", "cuBLASLt", 4, "cublasLtMatmul, heuristic's best algorithm"),
)


def _vendor(
    prefix: str, library: str, first: int, call: str, i: int, dtype: str, compute: str, min_cc: int, what: str
) -> Baseline:
    name = f"{prefix}_{dtype}"
    return Baseline(
        name=name,
        group="baseline",
        position=first + i,
        what_changed=f"{call}, {what}, row-major by operand swap",
        dtype=dtype,
        baseline=name,
        compute_type=compute,
        min_cc=min_cc,
        library=library,
    )


def _cublaslt_fp8(dtype: str, position: int, b_format: str) -> Baseline:
    """cuBLASLt for an FP8 class: E4M3 A, B in `b_format` ("" where it is E4M3 too), per-tensor scales, FP32 out."""
    return Baseline(
        name=f"cublaslt_{dtype}",
        group="baseline",
        position=position,
        what_changed=f"cublasLtMatmul, heuristic's best algorithm, E4M3 A (M x K) and {b_format}B (stored N x K) as TN, "
        "per-tensor scale pointers, FP32 out, CUBLAS_COMPUTE_32F, FAST_ACCUM off",
        dtype=dtype,
        baseline=f"cublaslt_{dtype}",
        compute_type="CUBLAS_COMPUTE_32F",
        min_cc=90,
        library="cuBLASLt",
    )


# FP8 (E4M3 A and B, per-tensor scales, FP32 out): cuBLASLt alone (cublasGemmEx has no FP8), Hopper on. Operand layout
# of the class: B stored N x K, both operands K-major, the "TN" cuBLASLt and wgmma need (farm/measure/checks.py).
# With B in E5M2 (A E4M3): cuBLASLt takes E4M3 x E5M2 and E5M2 x E4M3 on Hopper, not E5M2 x E5M2
# (kernels/hopper_fp8/README.md). Its A is the class's B (the operand swap), so it is asked for E5M2 x E4M3.
_FP8 = (_cublaslt_fp8("fp8_e4m3", 8, ""), _cublaslt_fp8("fp8_e4m3_e5m2", 9, "E5M2 "))
VENDOR_BASELINES = [
    *(_vendor(*lib, i, *precision) for lib in _LIBRARIES for i, precision in enumerate(_PRECISIONS)),
    *_FP8,
]


def _extra(position: int, name: str, library: str, dtype: str, min_cc: int, precision: str) -> Baseline:
    """A PyTorch or Triton GEMM timed as a baseline of its own; `precision` says what it computes."""
    return Baseline(
        name=name,
        group="baseline_extra",
        position=position,
        what_changed=f"{library}: {precision}",
        dtype=dtype,
        baseline=name,
        min_cc=min_cc,
        library=library,
        compute_type=precision,
    )


EXTRA_BASELINES: list[Baseline] = [
    _extra(
        10,
        "torch_fp32",
        "PyTorch",
        "fp32",
        50,
        "torch.mm, FP32 in/out, TF32 off (allow_tf32=False / fp32_precision='ieee' before every call)",
    ),
    _extra(
        11,
        "torch_tf32",
        "PyTorch",
        "tf32",
        80,
        "torch.mm on FP32 tensors with TF32 on (allow_tf32=True): what 'PyTorch FP32' often silently is",
    ),
    _extra(
        12,
        "torch_fp16",
        "PyTorch",
        "fp16",
        70,
        "torch.mm, FP16 in, FP32 out (out_dtype=torch.float32), FP32 accumulate",
    ),
    _extra(
        13,
        "torch_bf16",
        "PyTorch",
        "bf16",
        80,
        "torch.mm, BF16 in, FP32 out (out_dtype=torch.float32), FP32 accumulate",
    ),
    _extra(
        14,
        "triton_fp32",
        "Triton",
        "fp32",
        80,
        "persistent Triton matmul, FP32 in/out, tl.dot(input_precision='ieee'): no TF32",
    ),
    _extra(15, "triton_fp16", "Triton", "fp16", 80, "persistent Triton matmul, FP16 in, FP32 accumulate and out"),
    _extra(16, "triton_bf16", "Triton", "bf16", 80, "persistent Triton matmul, BF16 in, FP32 accumulate and out"),
    _extra(
        17,
        "torch_fp8_e4m3",
        "PyTorch",
        "fp8_e4m3",
        90,
        "torch._scaled_mm, E4M3 A (M x K) and B (stored N x K, passed as its column-major transpose), per-tensor "
        "scales, FP32 out, use_fast_accum=False",
    ),
    _extra(
        18,
        "torch_fp8_e4m3_e5m2",
        "PyTorch",
        "fp8_e4m3_e5m2",
        90,
        "torch._scaled_mm, E4M3 A (M x K) and E5M2 B (stored N x K, passed as its column-major transpose), per-tensor "
        "scales, FP32 out, use_fast_accum=False",
    ),
]

BASELINES = [*VENDOR_BASELINES, *EXTRA_BASELINES]
