"""Walk C, SIMT FP32: the RTX 4090 ladder of the "Learn CUTLASS the hard way" write-up.

Published figures: ms and % at 4096^3 on an RTX 4090 (sm_89), from the write-up's
warp-tiling table. Its % is of PyTorch's matmul on FP32 tensors, which ran with TF32
allowed (issue 6), so it is not a % of cuBLAS FP32: our rows say % of cublas_fp32.
"""

from pathlib import Path

from kernels.sources import declared_launch
from kernels.stage import Launch, Published, ShapeRule, Stage

FAMILY = "simt_fp32_c"
ORDER = 30  # families sort by this in the catalog
HERE = Path(__file__).resolve().parent
SOURCE = (
    "walk C: 'Learn CUTLASS the hard way' write-up, RTX 4090, 4096^3; % is of the write-up's PyTorch "
    "matmul on FP32 tensors (TF32 allowed), not of cuBLAS FP32"
)

VEC = ShapeRule(n_multiple=4, k_multiple=4)  # float4 global loads (A along K, B along N) and stores

# c_warptile's ladder configuration: (BM, BN, BK, WM, WN, STAGES); kernels/tuning.py varies it.
WARPTILE = (128, 128, 16, 64, 64, 1)


def _published(ms: float, pct: float) -> Published:
    return Published(
        device="NVIDIA GeForce RTX 4090", m=4096, n=4096, k=4096, ms=ms, pct_of_baseline=pct, source=SOURCE
    )


def _stage(position: int, name: str, file: str, launch: str | Launch, what: str, **kw) -> Stage:
    """`launch`: the kernel's name (its geometry declared in the .cu), or a template kernel's Launch."""
    launch = declared_launch(HERE / file, launch) if isinstance(launch, str) else launch
    return Stage(
        name=name,
        family=FAMILY,
        walk="C",
        group="ladder",
        position=position,
        source_path=HERE / file,
        launches=(launch,),
        what_changed=what,
        **kw,
    )


def warptile_smem(bm: int, bn: int, bk: int, stages: int) -> int:
    """Dynamic shared memory of c_warptile: `stages` x (As[bk][bm + 4] + Bs[bk][bn]) floats, in bytes."""
    return stages * bk * (bm + 4 + bn) * 4


def warptile_launch(bm: int, bn: int, bk: int, wm: int, wn: int, stages: int) -> Launch:
    return Launch(
        f"c_warptile<{bm}, {bn}, {bk}, {wm}, {wn}, {stages}>",
        32 * (bm // wm) * (bn // wn),
        bm,
        bn,
        dynamic_smem=warptile_smem(bm, bn, bk, stages),
    )


STAGES = [
    _stage(
        0,
        "c_naive",
        "00_naive.cu",
        "c_naive",
        "one thread per output, threadIdx.x walks rows: uncoalesced A loads and C stores",
        published=_published(210.29, 0.8),
    ),
    _stage(
        1,
        "c_coalesced",
        "01_coalesced.cu",
        "c_coalesced",
        "threadIdx.x walks columns: a warp reads one line of B and writes one line of C",
        published=_published(26.95, 6.1),
    ),
    _stage(
        2,
        "c_smem",
        "02_smem.cu",
        "c_smem",
        "32x32 tiles of A and B staged in shared memory",
        published=_published(22.40, 7.3),
    ),
    _stage(
        3,
        "c_blocktile_1d",
        "03_blocktile_1d.cu",
        "c_blocktile_1d",
        "64x64x8 block tile, 8 outputs per thread down a column (one Bs value reused 8 times)",
        published=_published(7.42, 22.0),
    ),
    _stage(
        4,
        "c_blocktile_2d",
        "04_blocktile_2d.cu",
        "c_blocktile_2d",
        "8x8 outputs per thread as a register outer product, 64 threads",
        published=_published(4.45, 36.7),
    ),
    _stage(
        5,
        "c_vectorized",
        "05_vectorized.cu",
        "c_vectorized",
        "float4 global loads and stores, A transposed in shared memory, LDS.128 for both operands",
        shapes=VEC,
        published=_published(3.52, 46.4),
    ),
    _stage(
        6,
        "c_warptile",
        "06_warptile.cu",
        warptile_launch(*WARPTILE),
        "128x128x16 block, 64x64 warp tiles of 16x32 sub-tiles, 4x4 per lane: conflict-free LDS.128, padded As",
        shapes=VEC,
        published=_published(3.00, 54.4),
    ),
]
