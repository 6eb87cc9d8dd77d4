"""Walk A: the SIMT FP32 ladder and its trait family (RTX 3050 Laptop write-up).

Published figures: ms and % of cuBLAS FP32 at 2048^3 on an RTX 3050 Laptop (sm_86),
from the walk-A write-up's tables (medians of 5 x 50 launches, cublasGemmEx 32F).
"""

from pathlib import Path

from kernels.sources import declared_launch
from kernels.stage import Launch, Published, ShapeRule, Stage

FAMILY = "simt_fp32"
ORDER = 10  # families sort by this in the catalog
HERE = Path(__file__).resolve().parent
SOURCE = "walk A: RTX 3050 Laptop SIMT FP32 write-up (Pupking/01_tiled_gemm), 2048^3"


def _published(ms: float, pct: float) -> Published:
    return Published(
        device="NVIDIA GeForce RTX 3050 Laptop GPU", m=2048, n=2048, k=2048, ms=ms, pct_of_baseline=pct, source=SOURCE
    )


def _stage(
    position: int, name: str, group: str, file: str, launch: str | Launch | tuple[Launch, ...], what: str, **kw
) -> Stage:
    """`launch`: a fixed kernel's name (one launch, its geometry declared in the .cu), a template kernel's Launch,
    or the launches themselves."""
    launches = (
        (declared_launch(HERE / file, launch),)
        if isinstance(launch, str)
        else launch
        if isinstance(launch, tuple)
        else (launch,)
    )
    return Stage(
        name=name,
        family=FAMILY,
        walk="A",
        group=group,
        position=position,
        source_path=HERE / file,
        launches=launches,
        what_changed=what,
        **kw,
    )


VEC = ShapeRule(n_multiple=4, k_multiple=4)  # float4 global loads (A along K, B along N) and stores
VEC_STORE = ShapeRule(n_multiple=4)  # float4 stores of C only

# The block-geometry sweep: (BM, BN, BK, TM, TN), threads = (BM/TM) * (BN/TN) in 64..256.
GEOMETRIES = [
    (bm, bn, bk, tm, tn)
    for bm in (64, 128)
    for bn in (64, 128)
    for bk in (8, 16)
    for tm, tn in ((8, 8), (8, 4))
    if 64 <= (bm // tm) * (bn // tn) <= 256
]
SPLITK = HERE / "13_splitk.cu"


STAGES = [
    _stage(
        0,
        "naive",
        "ladder",
        "00_naive.cu",
        "sgemm_naive",
        "one thread per output, operands straight from global memory",
        published=_published(39.73, 11),
    ),
    _stage(
        1,
        "tiled",
        "ladder",
        "01_tiled.cu",
        "sgemm_tiled",
        "32x32 shared-memory tiles, 2x2 outputs per thread",
        published=_published(11.28, 38),
    ),
    _stage(
        2,
        "tiled_coalesced",
        "ladder",
        "02_tiled_coalesced.cu",
        "sgemm_tiled_coalesced",
        "column-aligned thread mapping: full 32-byte sectors on loads/stores, conflict-free Bs reads",
        published=_published(9.06, 47),
    ),
    _stage(
        3,
        "regblock",
        "ladder",
        "03_regblock.cu",
        "sgemm_regblock",
        "64x64 tile (BK 32), 64 threads, 16x4 outputs per thread in registers",
        published=_published(7.22, 59),
    ),
    _stage(
        4,
        "warp_rebalance",
        "ladder",
        "04_warp_rebalance.cu",
        "sgemm_warp_rebalance",
        "128 threads of 8x4 outputs, <= 168 registers: 3 blocks per SM on sm_86",
        published=_published(6.35, 67),
    ),
    _stage(
        5,
        "bank_pad_vec",
        "ladder",
        "05_bank_pad_vec.cu",
        "sgemm_bank_pad_vec",
        "LDS.128 for the B operand, A tile padded to BK+1 (no bank conflicts)",
        published=_published(5.85, 73),
    ),
    _stage(
        6,
        "gmem_vec",
        "traits",
        "06_gmem_vec.cu",
        "sgemm_gmem_vec",
        "STG.128 (float4) stores of C",
        shapes=VEC_STORE,
        published=_published(5.88, 73),
    ),
    _stage(
        7,
        "wider_m",
        "traits",
        "07_wider_m.cu",
        "sgemm_wider_m",
        "128x64 tile, 256 threads, dynamic shared memory",
        shapes=VEC_STORE,
        published=_published(5.79, 74),
    ),
    _stage(
        8,
        "supertile",
        "traits",
        "08_supertile.cu",
        "sgemm_supertile",
        "4x4 supertile block remap for L2 reuse",
        shapes=VEC_STORE,
        published=_published(5.66, 75),
    ),
    _stage(
        9,
        "ldg_vec",
        "traits",
        "09_ldg_vec.cu",
        "sgemm_ldg_vec",
        "float4 (LDG.128) global loads of the A and B tiles",
        shapes=VEC,
        published=_published(4.90, 87),
    ),
    _stage(
        10,
        "ldg_super",
        "traits",
        "10_ldg_super.cu",
        "sgemm_ldg_super",
        "LDG.128 loads plus the 4x4 supertile remap",
        shapes=VEC,
        published=_published(4.89, 87),
    ),
    _stage(
        11,
        "ldg_wider2",
        "traits",
        "11_ldg_wider2.cu",
        "sgemm_ldg_wider2",
        "256x64 tile (BK 16), 16x4 outputs (64 sums) per thread",
        shapes=VEC,
        published=_published(4.86, 88),
    ),
    _stage(
        12,
        "multibuf",
        "did_not_pan_out",
        "12_multibuf.cu",
        "sgemm_multibuf",
        "cp.async 4-stage ring (BK 16), 128x128 tile, 8x8 per thread in 32x64 warp tiles, "
        "A transposed k-major by 4-byte cp.async: 4 LDS.128 per 64 FFMA",
        shapes=VEC,
        min_cc=80,
    ),
    _stage(
        13,
        "splitk",
        "did_not_pan_out",
        "13_splitk.cu",
        (
            declared_launch(SPLITK, "sgemm_splitk_partial", args=("A", "B", "W", "M", "N", "K"), splits=4),
            declared_launch(SPLITK, "sgemm_splitk_reduce", "REDUCE_", args=("W", "C", "M", "N", "SPLITS")),
        ),
        "split-K over 4 slices into a workspace, then a reduction into C",
        shapes=VEC,
        workspace_floats_per_mn=4,
    ),
    *[
        _stage(
            14,
            f"geom_{bm}x{bn}x{bk}_{tm}x{tn}",
            "geometry",
            "14_geometry.cu",
            Launch(f"sgemm_geometry<{bm}, {bn}, {bk}, {tm}, {tn}>", (bm // tm) * (bn // tn), bm, bn),
            f"block-geometry sweep: {bm}x{bn}x{bk} block tile, {tm}x{tn} per thread",
            shapes=VEC,
        )
        for bm, bn, bk, tm, tn in GEOMETRIES
    ],
]
