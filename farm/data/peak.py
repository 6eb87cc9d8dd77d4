"""How close to the metal: a GPU's dense peak throughput per precision, its memory bandwidth, and a GEMM's
arithmetic intensity, the ceilings behind `% of peak` and the roofline.

peak (TFLOP/s) = FLOP per clock per SM x SMs x max SM clock, all three from the row itself except the FLOP
per clock, which comes from RATES (per architecture and precision, each entry citing its source). FP32 is the
CUDA cores (FFMA = 2 FLOP); TF32, FP16, BF16 and FP8 are the tensor cores, dense (no 2:4 sparsity), FP32 accumulate
(what every kernel here and cuBLAS's FP32-output GEMMs use). FP8 has an entry for Hopper alone so far: elsewhere its
peak is unknown and its rows' limit check says so. The max SM clock is NVML's (`max_sm_clock_mhz`),
the highest the card may run: NVIDIA quotes some tensor peaks at a lower boost clock (H100 SXM: 1830 MHz, against
NVML's 1980), so this peak can sit above the datasheet's and a % of it is the harder one to reach.
"""

from __future__ import annotations

from dataclasses import dataclass

CUDA_GUIDE = (
    "CUDA C++ Programming Guide, Arithmetic Instructions throughput table (32-bit floating-point "
    "add/multiply/multiply-add results per clock per SM: 64 on 8.0, 128 on 8.6, 8.9, 9.0, 10.0, 12.0), "
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#arithmetic-instructions"
)
AMPERE = (
    "NVIDIA A100 Tensor Core GPU Architecture whitepaper: A100 SXM4, 108 SMs at 1410 MHz, dense TF32 156 and "
    "FP16/BF16 312 TFLOPS, https://images.nvidia.com/aem-dam/en-zz/Solutions/data-center/nvidia-ampere-architecture-whitepaper.pdf"
)
GA102 = (
    "NVIDIA Ampere GA102 GPU Architecture whitepaper: RTX 3090, 82 SMs at 1695 MHz, dense TF32 35.6, FP16/BF16 with "
    "FP32 accumulate 71 TFLOPS (with FP16 accumulate 142), "
    "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf"
)
A40 = (
    "NVIDIA A40 data sheet: 84 SMs at 1740 MHz, dense FP16/BF16 149.7 TFLOPS (full rate with FP32 accumulate on "
    "the professional GA102), https://images.nvidia.com/content/Solutions/data-center/a40/nvidia-a40-datasheet.pdf"
)
ADA = (
    "NVIDIA Ada GPU Architecture whitepaper: RTX 4090, 128 SMs at 2520 MHz, dense TF32 82.6, FP16/BF16 with FP32 "
    "accumulate 165.2 TFLOPS (with FP16 accumulate 330.3); L40, 142 SMs at 2490 MHz, FP16 with FP32 accumulate 181.05, "
    "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf"
)
HOPPER = (
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper: H100 SXM5, 132 SMs, dense TF32 494.7 and FP16/BF16 "
    "989.4 TFLOPS at 1830 MHz (4th-generation tensor core: twice A100's dense FMA rate per SM), "
    "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper"
)
HOPPER_FP8 = (
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper: H100 SXM5, 132 SMs, dense FP8 (E4M3/E5M2) 1978.9 "
    "TFLOPS with FP16 or FP32 accumulate at 1830 MHz (3957.8 with 2:4 sparsity): twice its FP16 rate, "
    "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper; H200 data sheet: FP8 Tensor Core "
    "3,958 TFLOPS with sparsity (the same GH100 tensor cores), https://www.nvidia.com/en-us/data-center/h200/"
)
BLACKWELL = (
    "NVIDIA Blackwell Architecture Technical Brief / HGX B200 data: B200, 148 SMs, dense TF32 1.1 and FP16/BF16 "
    "2.25 PFLOPS per GPU (5th-generation tensor core: twice Hopper's dense rate per SM), "
    "https://resources.nvidia.com/en-us-blackwell-architecture"
)
RTX_BLACKWELL = (
    "NVIDIA RTX Blackwell GPU Architecture whitepaper: RTX 5090, 170 SMs at 2407 MHz, dense TF32 104.8, "
    "FP16/BF16 with FP32 accumulate 209.5 TFLOPS (with FP16 accumulate 419), "
    "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf"
)


@dataclass(frozen=True)
class Rate:
    """Dense FLOP per clock per SM (FMA = 2), and the GeForce boards' rate where NVIDIA halves it there."""

    flop: int
    source: str
    geforce: int | None = None


# Tensor-core entries are the quoted TFLOPS / (SMs x the clock they are quoted at), rounded to the power of two
# they are (e.g. 989.4e12 / (132 x 1.83e9) = 4096).
RATES: dict[str, dict[str, Rate]] = {
    "sm_80": {
        "fp32": Rate(128, CUDA_GUIDE),
        "tf32": Rate(1024, AMPERE),
        "fp16": Rate(2048, AMPERE),
        "bf16": Rate(2048, AMPERE),
    },
    "sm_86": {
        "fp32": Rate(256, CUDA_GUIDE),
        "tf32": Rate(256, GA102),
        "fp16": Rate(1024, f"{A40}; GeForce: {GA102}", geforce=512),
        "bf16": Rate(1024, f"{A40}; GeForce: {GA102}", geforce=512),
    },
    "sm_89": {"fp32": Rate(256, CUDA_GUIDE), "tf32": Rate(256, ADA), "fp16": Rate(512, ADA), "bf16": Rate(512, ADA)},
    "sm_90": {
        "fp32": Rate(256, CUDA_GUIDE),
        "tf32": Rate(2048, HOPPER),
        "fp16": Rate(4096, HOPPER),
        "bf16": Rate(4096, HOPPER),
        "fp8_e4m3": Rate(8192, HOPPER_FP8),
        "fp8_e4m3_e5m2": Rate(8192, HOPPER_FP8),  # the whitepaper's FP8 rate is for E4M3 and E5M2 alike
    },
    "sm_100": {
        "fp32": Rate(256, CUDA_GUIDE),
        "tf32": Rate(4096, BLACKWELL),
        "fp16": Rate(8192, BLACKWELL),
        "bf16": Rate(8192, BLACKWELL),
    },
    "sm_120": {
        "fp32": Rate(256, CUDA_GUIDE),
        "tf32": Rate(256, RTX_BLACKWELL),
        "fp16": Rate(512, RTX_BLACKWELL),
        "bf16": Rate(512, RTX_BLACKWELL),
    },
}
UNIT = {
    "fp32": "CUDA cores (FFMA)",
    "tf32": "tensor cores",
    "fp16": "tensor cores",
    "bf16": "tensor cores",
    "fp8_e4m3": "tensor cores",
    "fp8_e4m3_e5m2": "tensor cores",
}

# Rows carry no memory bus width, so the memory roof comes from the data sheets, keyed by NVML's device name.
BANDWIDTH_TBS: dict[str, tuple[float, str]] = {
    "NVIDIA H100 80GB HBM3": (3.35, "H100 SXM data sheet, https://www.nvidia.com/en-us/data-center/h100/"),
    "NVIDIA H100 PCIe": (2.0, "H100 PCIe data sheet, https://www.nvidia.com/en-us/data-center/h100/"),
    "NVIDIA H200": (4.8, "H200 data sheet, https://www.nvidia.com/en-us/data-center/h200/"),
    "NVIDIA A100-SXM4-80GB": (2.039, "A100 data sheet, https://www.nvidia.com/en-us/data-center/a100/"),
    "NVIDIA A100-SXM4-40GB": (1.555, "A100 data sheet, https://www.nvidia.com/en-us/data-center/a100/"),
    "NVIDIA GeForce RTX 3090": (0.936, GA102),
    "NVIDIA GeForce RTX 4090": (1.008, ADA),
    "NVIDIA GeForce RTX 5090": (1.792, RTX_BLACKWELL),
}

OPERAND_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8_e4m3": 1, "fp8_e4m3_e5m2": 1}
OUTPUT_BYTES = 4  # C is FP32 for every precision


def arch_of(arch: str | None, compute_capability: str | None = None) -> str | None:
    """'sm_90' from the row's arch, else from its compute capability ('9.0')."""
    if arch:
        return arch
    return "sm_" + compute_capability.replace(".", "") if compute_capability else None


def rate(arch: str | None, dtype: str) -> Rate | None:
    """The architecture's rate; for one not in RATES (sm_87, sm_103, sm_121...), the highest rate of its family
    (same major version): an upper bound, which is what the physical-limit check needs; None for an unknown family."""
    if arch in RATES:
        return RATES[arch].get(dtype)
    major = _major(arch)
    family = [r[dtype] for a, r in RATES.items() if _major(a) == major and major is not None and dtype in r]
    return max(family, key=lambda r: r.flop) if family else None


def _major(arch: str | None) -> int | None:
    digits = (arch or "").removeprefix("sm_").rstrip("af")
    return int(digits) // 10 if digits.isdigit() else None


def flop_per_clock(arch: str | None, dtype: str, gpu_name: str | None = "") -> int | None:
    """Dense FLOP per clock per SM for this architecture, precision and board (GeForce where it differs)."""
    r = rate(arch, dtype)
    if r is None:
        return None
    return r.geforce if r.geforce and "GeForce" in (gpu_name or "") else r.flop


def peak_tflops(
    arch: str | None, dtype: str, sm_count: float | None, max_sm_clock_mhz: float | None, gpu_name: str | None = ""
) -> float | None:
    """The dense peak in TFLOP/s, None where the architecture, precision, SM count or clock is unknown."""
    per_clock = flop_per_clock(arch, dtype, gpu_name)
    if not per_clock or not sm_count or not max_sm_clock_mhz or max_sm_clock_mhz != max_sm_clock_mhz:
        return None
    return per_clock * sm_count * max_sm_clock_mhz * 1e6 / 1e12


def bandwidth_tbs(gpu_name: str | None) -> float | None:
    entry = BANDWIDTH_TBS.get(gpu_name or "")
    return entry[0] if entry else None


def operand_bytes(m: int, n: int, k: int, dtype: str) -> int:
    """Bytes of A and B in their storage precision."""
    return (m * k + k * n) * OPERAND_BYTES[dtype]


def compulsory_bytes(m: int, n: int, k: int, dtype: str) -> int:
    """DRAM bytes a GEMM cannot avoid: A and B read once, C written once (beta = 0, so C is never read)."""
    return operand_bytes(m, n, k, dtype) + m * n * OUTPUT_BYTES


def intensity(m: int, n: int, k: int, dtype: str) -> float:
    """Arithmetic intensity, FLOP per compulsory DRAM byte."""
    return 2.0 * m * n * k / compulsory_bytes(m, n, k, dtype)


def row_peak_tflops(row: dict) -> float | None:
    """The dense peak of a result row's GPU for its precision, from the row's own columns."""
    return peak_tflops(
        arch_of(row.get("arch"), row.get("compute_capability")),
        row.get("dtype") or "",
        row.get("sm_count"),
        row.get("max_sm_clock_mhz"),
        row.get("gpu_name"),
    )


def pct_of_peak(row: dict) -> float | None:
    """A result row's TFLOP/s (flops / median_ms) as % of its GPU's dense peak for its precision."""
    peak = row_peak_tflops(row)
    ms = row.get("median_ms")
    if peak is None or not ms:
        return None
    return 100.0 * row["flops"] / (ms * 1e9) / peak
