"""Walk A: the SIMT FP32 ladder and its trait family (RTX 3050 Laptop write-up).

Published figures: ms and % of cuBLAS FP32 at 2048^3 on an RTX 3050 Laptop (sm_86),
from the walk-A write-up's tables (medians of 5 x 50 launches, cublasGemmEx 32F).
"""
from kernels.registry import Launch, Published, ShapeRule, Stage

FAMILY = "simt_fp32"
SOURCE = "walk A: RTX 3050 Laptop SIMT FP32 write-up (Pupking/01_tiled_gemm), 2048^3"


def _published(ms: float, pct: float) -> Published:
    return Published(device="NVIDIA GeForce RTX 3050 Laptop GPU", m=2048, n=2048, k=2048, ms=ms, pct_of_baseline=pct, source=SOURCE)


def _stage(position: int, name: str, group: str, file: str, launch: Launch, what: str, **kw) -> Stage:
    return Stage(name=name, family=FAMILY, walk="A", group=group, position=position, source=f"simt_fp32/{file}",
                 launches=(launch,), what_changed=what, **kw)


STAGES = [
    _stage(0, "naive", "ladder", "00_naive.cu", Launch("sgemm_naive", (16, 16), 16, 16),
           "one thread per output, operands straight from global memory", published=_published(39.73, 11)),
    _stage(1, "tiled", "ladder", "01_tiled.cu", Launch("sgemm_tiled", 256, 32, 32),
           "32x32 shared-memory tiles, 2x2 outputs per thread", published=_published(11.28, 38)),
]
