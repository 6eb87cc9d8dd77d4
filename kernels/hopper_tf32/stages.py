"""Walk D in TF32: walk B's FP32-in, TF32-multiply GEMM (row-major A and B, FP32 C) on Hopper's
wgmma, TMA and warp specialization; baseline cublas_tf32.

wgmma reads TF32 operands only K-major from shared memory and B is N-major, so every stage computes
C^T = B^T A^T: B^T's fragments from registers (loaded from B's tile as TMA wrote it), A^T by descriptor
(kernels/common/hopper_tf32.cuh says how). Built for sm_90a alone, so on any other chip the cells are
skipped with the reason. Tensor maps TMA_A / TMA_B (farm/measure/tma.py): A in boxes of tile_m rows x 32,
B in 32 x 32 boxes, 128-byte swizzled. Notes and measurements: kernels/hopper_tf32/README.md.
"""

from pathlib import Path

from kernels.sources import declared_launch
from kernels.stage import ShapeRule, Stage

FAMILY = "hopper_tf32"
ORDER = 55  # after walk D's 16-bit ladder (50)
HERE = Path(__file__).resolve().parent
ARCH = "sm_90a"
VEC4 = ShapeRule(n_multiple=4, k_multiple=4)  # TMA's 16-byte global strides: rows of A and B in whole 16-byte chunks
TMA_ARGS = ("TMA_A", "TMA_B", "C", "M", "N", "K")
PERSISTENT = {"args": TMA_ARGS, "persistent": True}

# (name, file, launch options, what changed) in ladder order; each kernel's threads, tile, dynamic shared memory and
# cluster are declared in its .cu.
KERNELS = [
    (
        "tf32_wgmma",
        "00_wgmma.cu",
        {"args": TMA_ARGS},
        "wgmma m64n128k8 .tf32 on C^T = B^T A^T (B^T fragments from registers, A^T by descriptor), 128x128x32 tile "
        "fed by TMA on mbarriers, 4 stages, one block barrier per k tile",
    ),
    (
        "tf32_warp_specialized",
        "01_warp_specialized.cu",
        {"args": TMA_ARGS},
        "256x128 tile: producer warpgroup (TMA) + 2 consumer warpgroups (m64n256k8), full/empty mbarriers, setmaxnreg",
    ),
    (
        "tf32_persistent",
        "02_persistent.cu",
        PERSISTENT,
        "persistent: one block per SM loops over tiles in 8-tile-row groups (L2 reuse); next tile's loads overlap the epilogue",
    ),
    (
        "tf32_multicast",
        "03_multicast.cu",
        PERSISTENT,
        "clusters of 2 vertically adjacent tiles: each CTA loads half the shared B tile, TMA-multicast into both",
    ),
    (
        "tf32_staged_epilogue",
        "04_staged_epilogue.cu",
        {"args": TMA_ARGS},
        "01 with C through shared memory: the freed ring holds the 256x128 tile (rows padded by 2), copied out in rows",
    ),
]

STAGES = [
    Stage(
        name=name,
        family=FAMILY,
        walk="D",
        group="ladder",
        position=position,
        source_path=HERE / file,
        launches=(declared_launch(HERE / file, name, **launch),),
        what_changed=what,
        dtype="tf32",
        baseline="cublas_tf32",
        shapes=VEC4,
        min_cc=90,
        requires_arch=ARCH,
    )
    for position, (name, file, launch, what) in enumerate(KERNELS)
]
