"""Walk B: the TF32 tensor-core ladder (RTX 5060 Laptop write-up), mma.sync m16n8k8 via inline PTX.

Every stage: 128x128x16 block tile, 256 threads in 2 x 4 warps of 64x32, FP32 in, TF32
(cvt.rna) into the tensor cores, FP32 accumulate and out; % is against cuBLAS TF32.
Published figures: mean ms at 4096^3 on an RTX 5060 Laptop GPU from the write-up's
benchmark listings (one session), % of its cuBLAS TF32 at 8.535 ms (16.10 TFLOPS).
"""

from pathlib import Path

from kernels.sources import declared_launch
from kernels.stage import Published, ShapeRule, Stage

FAMILY = "tf32"
ORDER = 20  # families sort by this in the catalog
HERE = Path(__file__).resolve().parent
SOURCE = "walk B: RTX 5060 Laptop TF32 tensor-core write-up (WingEdge777/vitamin-cuda, sgemm_tf32), 4096^3"
CUBLAS_TF32_MS = 8.535476  # the write-up's sgemm_cublas_tf32 at 4096^3

# 16-byte chunks: A rows along K and B rows along N move by cp.async / LDG.128; any M.
SHAPES = ShapeRule(n_multiple=4, k_multiple=4)


def _published(ms: float) -> Published:
    return Published(
        device="NVIDIA GeForce RTX 5060 Laptop GPU",
        m=4096,
        n=4096,
        k=4096,
        ms=ms,
        pct_of_baseline=round(100 * CUBLAS_TF32_MS / ms, 1),
        source=SOURCE,
    )


def _stage(position: int, name: str, file: str, what: str, ms: float) -> Stage:
    return Stage(
        name=name,
        family=FAMILY,
        walk="B",
        group="ladder",
        position=position,
        source_path=HERE / file,
        launches=(declared_launch(HERE / file, name),),
        what_changed=what,
        dtype="tf32",
        baseline="cublas_tf32",
        shapes=SHAPES,
        min_cc=80,
        published=_published(ms),
    )


STAGES = [
    _stage(
        0,
        "tf32_bt",
        "00_tf32_bt.cu",
        "mma.sync m16n8k8 TF32, 128x128x16 tile, 8 warps of 64x32; A by cp.async, B by LDG.128 stored "
        "transposed; ldmatrix .x4 (A) / .x2 (B), no swizzle (4-way ldmatrix, 8-way store conflicts)",
        15.925327,
    ),
    _stage(
        1,
        "tf32_bt_swizzle",
        "01_tf32_bt_swizzle.cu",
        "XOR swizzle of both 128x16 tiles (row bits into the 16-byte chunk, across row pairs): "
        "conflict-free ldmatrix, cp.async and transposing stores",
        9.786451,
    ),
    _stage(
        2,
        "tf32_bt_swizzle_dbf",
        "02_tf32_bt_swizzle_dbf.cu",
        "two shared-memory stages (A by cp.async, B through registers, one barrier per tile) and "
        "block order in 8-tile column strips for L2 reuse",
        8.723189,
    ),
    _stage(
        3,
        "tf32_swizzle_bcf",
        "03_tf32_swizzle_bcf.cu",
        "B by cp.async too, untransposed 16x128 with k%4 XORed into n bits 3..4; B fragments by "
        "conflict-free 32-bit shared loads; single stage again",
        8.650843,
    ),
    _stage(
        4,
        "tf32_swizzle_bcf_dbf",
        "04_tf32_swizzle_bcf_dbf.cu",
        "tf32_swizzle_bcf with two cp.async stages (copies of tile k+1 overlap the mma of tile k)",
        8.275736,
    ),
]
