"""Hopper FP8: E4M3 A and B with a per-tensor scale each, FP32 accumulate, FP32 C, through wgmma fed by TMA.

The FP8 precision class (`fp8_e4m3`) stores B as N x K: FP8 wgmma, like cuBLASLt's FP8 on Hopper ("TN"), takes
both operands K-major, so every kernel and baseline of the class reads A (M x K) and B (N x K) with K contiguous
and computes C = scale_a * scale_b * A . B^T (farm/measure/checks.py makes the inputs and scales). The baseline is
cuBLASLt (cublasGemmEx has no FP8), then torch._scaled_mm where cuBLASLt offers no algorithm. sm_90a alone:
elsewhere the cells are skipped with the reason. TMA_A / TMA_B: farm/measure/tma.py, boxes of tile rows x 128 bytes
of K. SCALE_A / SCALE_B: the dequantisation factors, device floats.

A second class, `fp8_e4m3_e5m2` (A E4M3, B E5M2: the training backward pass's gradient operand, E5M2's range for its
2 mantissa bits), runs 03, 04, 07 and 09 again: the same files compiled with FP8_B_E5M2 defined, which makes wgmma's
type pair .e4m3.e5m2 (.e5m2.e4m3 where 07 swaps the operands), named <stage>_e4m3_e5m2, against
cublaslt_fp8_e4m3_e5m2 (why that pair: kernels/hopper_fp8/README.md).
"""

from pathlib import Path

from kernels.hopper_d.host_plan import half_launch_plan
from kernels.hopper_fp8 import tile_plan
from kernels.hopper_fp8.swap_plan import launch_plan
from kernels.sources import declared_launch
from kernels.stage import LaunchPlan, ShapeRule, Stage, cdiv

FAMILY = "hopper_fp8"
ORDER = 55
DTYPE = "fp8_e4m3"
BASELINE = "cublaslt_fp8_e4m3"
# A E4M3, B E5M2: the stages of MIXED again, their compile defining MIXED_DEFINE
MIXED_DTYPE = "fp8_e4m3_e5m2"
MIXED_BASELINE = "cublaslt_fp8_e4m3_e5m2"
MIXED_DEFINE = "FP8_B_E5M2"
# the best stages at the cubes and LLM shapes
MIXED = ("f_mma_overlap_fp8", "f_multicast_fp8", "f_swap_plan_fp8", "f_half_tiles_fp8")
ARCH = "sm_90a"
# K % 16: TMA's 16-byte global strides; N % 8: float2 stores of C.
SHAPES = ShapeRule(n_multiple=8, k_multiple=16)
ARGS = ("TMA_A", "TMA_B", "C", "SCALE_A", "SCALE_B", "M", "N", "K")
PERSISTENT = {"args": ARGS, "persistent": True}
MAX_SPLITS = 8  # 05's and 06's K slices at most (their SPLITS): the workspace W is that many M x N planes of partials
SPLIT_K = {
    "args": ("TMA_A", "TMA_B", "C", "W", "SCALE_A", "SCALE_B", "M", "N", "K", "SPLITS"),
    "persistent": True,
    "splits": MAX_SPLITS,
}
# 07: its plan made on the host (swap_plan.py) and passed as TN, BNT, SLICES.
SWAP_PLAN = {
    "args": ("TMA_A", "TMA_B", "C", "W", "SCALE_A", "SCALE_B", "M", "N", "K", "TN", "BNT", "SLICES"),
    "persistent": True,
    "splits": MAX_SPLITS,
    "planner": launch_plan,
}
# 10: 07's launch as a programmatic dependent launch (walk D 15's).
SWAP_DEPENDENT = {**SWAP_PLAN, "dependent": True}
# 08: its plan (tile_plan.py) passed as TN, BNT, SLICES: swapped up to 128 tokens, 128-row tiles above.
TILE_PLAN = {
    "args": ("TMA_A", "TMA_B", "C", "W", "SCALE_A", "SCALE_B", "M", "N", "K", "TN", "BNT", "SLICES"),
    "persistent": True,
    "splits": MAX_SPLITS,
    "planner": tile_plan.launch_plan,
}


def half_tiles_plan(m: int, n: int, k: int, blocks: int) -> LaunchPlan:
    """09's ROWS, WIDTH, DP, SK and workspace: walk D 17's plan over K in 16-bit elements, since a k tile of 128 FP8
    elements moves the bytes, and takes the tensor time, of one of 64 16-bit elements."""
    return half_launch_plan(m, n, cdiv(k, 2), blocks)


# 09: walk D 17's pipeline on FP8 operands (kernels/common/operands.cuh), B in 64-row boxes (TMA_B64).
HALF_TILES = {
    "args": (
        "TMA_A",
        "TMA_A128",
        "TMA_B64",
        "TMA_C",
        "C",
        "W",
        "SCALE_A",
        "SCALE_B",
        "M",
        "N",
        "K",
        "ROWS",
        "WIDTH",
        "DP",
        "SK",
    ),
    "persistent": True,
    "planner": half_tiles_plan,
    "dependent": True,
}
HERE = Path(__file__).resolve().parent

# (name, file, launch options, what changed), in ladder order; threads, tile, dynamic shared memory and cluster are
# declared in each .cu (02-04: kernels/common/persistent_fp8.cuh; 05: split_k_fp8.cuh). 06's declared tile (BM 16,
# BN 64) is its A and B boxes' rows (farm/measure/tma.py) and sizes its grid; its real tile is picked in the kernel
# (07, 08, 10: on the host).
_KERNELS = [
    (
        "f_wgmma_fp8",
        "00_wgmma_fp8.cu",
        {"args": ARGS},
        "wgmma m64n128k32 E4M3 from TMA-loaded, 128-byte-swizzled K-major tiles (128x128x128, 4 stages, 2 warpgroups), "
        "one barrier per k tile, the whole K in wgmma's accumulators, per-tensor scales in the epilogue",
    ),
    (
        "f_warp_specialized_fp8",
        "01_warp_specialized_fp8.cu",
        {"args": ARGS},
        "128x256 tile: producer warpgroup (TMA) + 2 consumer warpgroups (m64n256k32), full/empty mbarriers, setmaxnreg",
    ),
    (
        "f_persistent_fp8",
        "02_persistent_fp8.cu",
        PERSISTENT,
        "persistent: one block per SM loops over tiles in 16-tile-row groups (L2 reuse); next tile's loads overlap the epilogue",
    ),
    (
        "f_mma_overlap_fp8",
        "03_mma_overlap_fp8.cu",
        PERSISTENT,
        "one wgmma group kept in flight (wait_group 1): a stage is released when the next k tile's wgmmas are queued",
    ),
    (
        "f_multicast_fp8",
        "04_multicast_fp8.cu",
        PERSISTENT,
        "clusters of 2 vertically adjacent tiles: each k tile's B box loaded by one CTA (alternating), TMA-multicast into both",
    ),
    (
        "f_split_k_fp8",
        "05_split_k_fp8.cu",
        SPLIT_K,
        "03 plus split-K while tiles leave SMs idle: up to 8 K slices, partials in a workspace, the last warp sums them",
    ),
    (
        "f_swap_ab_fp8",
        "06_swap_ab_fp8.cu",
        SPLIT_K,
        "M <= 64: C^T = B^T A^T, tokens as wgmma's N (16 or 64) in 16-row A boxes, 1-8 K slices, a 12-deep ring; "
        "above, 05's path in small boxes",
    ),
    (
        "f_swap_plan_fp8",
        "07_swap_plan_fp8.cu",
        SWAP_PLAN,
        "06 swapped up to M = 128 (m64n128k32), its plan (tokens, features, K slices) made on the host, partials stored "
        "and summed in the accumulators' order (float4, every slice's loads in flight), tensor maps prefetched",
    ),
    (
        "f_tile_plan_fp8",
        "08_tile_plan_fp8.cu",
        TILE_PLAN,
        "07 with a host plan above 128 tokens too (128 x 256 or 128 x 128 tiles, 1-8 K slices, partials in the "
        "accumulators' order) and 07's fix-up: every slice stores its partial, the last to arrive sums them in slice order",
    ),
    (
        "f_half_tiles_fp8",
        "09_half_tiles_fp8.cu",
        HALF_TILES,
        "walk D's 17 on FP8 operands: A in one 64- or 128-row box a k tile, B in 64-row boxes, whole 64-row tiles or "
        "128-row tiles whole and stream-K on 17's plan, C by TMA stores, a dependent launch",
    ),
    (
        "f_swap_dependent_fp8",
        "10_swap_dependent_fp8.cu",
        SWAP_DEPENDENT,
        "07 as a programmatic dependent launch (walk D 15's): its setup overlaps the previous kernel's end, then every "
        "thread waits for it before the first load",
    ),
]


def _stage(position: int, name: str, file: str, launch: dict, what: str, mixed: bool) -> Stage:
    return Stage(
        name=f"{name}_e4m3_e5m2" if mixed else name,
        family=FAMILY,
        walk="F",
        group="ladder",
        position=position,
        source_path=HERE / file,
        launches=(declared_launch(HERE / file, name, **launch),),
        what_changed=f"{what}; B in E5M2 (FP8_B_E5M2: wgmma's B-operand type .e5m2)" if mixed else what,
        dtype=MIXED_DTYPE if mixed else DTYPE,
        baseline=MIXED_BASELINE if mixed else BASELINE,
        shapes=SHAPES,
        min_cc=90,
        requires_arch=ARCH,
        workspace_floats_per_mn=launch.get("splits", 1) if "W" in launch["args"] and "planner" not in launch else 0,
        defines=(MIXED_DEFINE,) if mixed else (),
    )


STAGES = [_stage(position, *kernel, mixed=False) for position, kernel in enumerate(_KERNELS)] + [
    _stage(position, *kernel, mixed=True) for position, kernel in enumerate(_KERNELS) if kernel[0] in MIXED
]
