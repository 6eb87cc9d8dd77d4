"""Walk D, Hopper: BF16 and FP16 inputs, FP32 accumulate, FP32 C, from mma.sync to wgmma fed by TMA.

Every kernel is one template over the input type, registered twice like walk C's:
<name>_bf16 (baseline cublas_bf16) and <name>_fp16 (cublas_fp16). The family is built
for sm_90a alone (wgmma, setmaxnreg and the TMA paths are arch-specific), so on any other
chip its cells are skipped with the reason. Any M, any K % 8 == 0, and any N: N % 8 != 0 runs padded (PAD_N_TO).
Kernels taking tensor maps name them TMA_A / TMA_B (TMA_C: 12's to 17's C; TMA_A128: 13's, 14's and 17's A for 12's tiles):
farm/measure/tma.py builds them, A in boxes of tile_m rows x 64 (TMA_A128: 128 rows), B in 64 x 64 boxes, C in 64 x 32.
Notes and measurements: kernels/hopper_d/README.md.
"""

from functools import partial
from pathlib import Path

from kernels.hopper_d import cluster_plan, swap_plan
from kernels.hopper_d.host_plan import (
    STREAM_K_PRICE,
    half_launch_plan,
    halves_launch_plan,
    launch_plan,
    mixed_launch_plan,
    ordered_launch_plan,
    tall_launch_plan,
)
from kernels.sources import declared_launch
from kernels.stage import ShapeRule, Stage

FAMILY = "hopper_d"
ORDER = 50  # families sort by this in the catalog
HERE = Path(__file__).resolve().parent
DTYPES = {"bf16": ("__nv_bfloat16", "cublas_bf16"), "fp16": ("__half", "cublas_fp16")}
ARCH = "sm_90a"
# 16-byte row chunks (cp.async) and TMA's 16-byte global strides: K % 8 == 0 for A (M x K); B (K x N) and C run at
# N rounded up to a multiple of 8, copied in and out by the harness inside the timed sequence (README.md, Tails)
K8 = ShapeRule(k_multiple=8)
PAD_N_TO = 8
TMA_ARGS = ("TMA_A", "TMA_B", "C", "M", "N", "K")
PERSISTENT = {"args": TMA_ARGS, "persistent": True}
MAX_SPLITS = 8  # d_split_k's K slices, d_stream_k's segments of a tile at most: their workspace's M x N planes
WORKSPACE_ARGS = ("TMA_A", "TMA_B", "C", "W", "M", "N", "K")

# (name, file, launch options, what changed) in ladder order; a stage's position is its file's number. Each is the template kernel name<T>, registered for
# both input types; its threads, tile, dynamic shared memory and cluster are declared in its .cu.
# 13's launch arguments, which 14 takes too with its SPLIT between them: the operands and sizes, then the host's plan.
SWAP_PLAN_OPERANDS = ("TMA_A", "TMA_A128", "TMA_B", "TMA_C", "C", "W", "M", "N", "K")
SWAP_PLAN_PLAN = ("TN", "BNT", "SLICES", "WIDTH", "DP", "SK")

# 17's and 18's launch: 13's operands, then ROWS (64: whole 64-row tiles over TMA_A's 64-row boxes; 128: 16's path
# over TMA_A128) and 16's WIDTH, DP, SK, from host_plan.half_launch_plan.
HALF_TILES = {
    **PERSISTENT,
    "args": (*SWAP_PLAN_OPERANDS, "ROWS", "WIDTH", "DP", "SK"),
    "planner": half_launch_plan,
    "dependent": True,
}
TAIL_HALVES = {**HALF_TILES, "args": (*HALF_TILES["args"], "GROUP", "SPANS", "HALVES"), "planner": halves_launch_plan}

# 13's launch (18's as a dependent launch): its operands, then its plan (swap_plan.py).
SWAP_PLAN = {**PERSISTENT, "args": (*SWAP_PLAN_OPERANDS, *SWAP_PLAN_PLAN), "planner": swap_plan.launch_plan}

KERNELS = [
    (
        "d_mma_sync",
        "00_mma_sync.cu",
        {},
        "mma.sync m16n8k16 + ldmatrix(.trans), 128x128x64 tile, 3-stage cp.async into 128-byte-swizzled smem",
    ),
    (
        "d_wgmma",
        "01_wgmma.cu",
        {},
        "wgmma m64n128k16 from shared-memory descriptors (2 warpgroups), same cp.async pipeline",
    ),
    (
        "d_tma",
        "02_tma.cu",
        {"args": TMA_ARGS},
        "TMA boxes (pre-swizzled, zero-filled edges) completing on mbarriers, 4 stages, issued by one thread",
    ),
    (
        "d_warp_specialized",
        "03_warp_specialized.cu",
        {"args": TMA_ARGS},
        "128x256 tile: producer warpgroup (TMA) + 2 consumer warpgroups (m64n256k16), full/empty mbarriers, setmaxnreg",
    ),
    (
        "d_persistent",
        "04_persistent.cu",
        PERSISTENT,
        "persistent: one block per SM loops over tiles in 16-tile-row groups (L2 reuse); next tile's loads overlap the epilogue",
    ),
    (
        "d_mma_overlap",
        "05_mma_overlap.cu",
        PERSISTENT,
        "one wgmma group kept in flight (wait_group 1): a stage is released when the next tile's wgmmas are queued",
    ),
    (
        "d_multicast",
        "06_multicast.cu",
        PERSISTENT,
        "clusters of 2 vertically adjacent tiles: each CTA loads half the shared B tile, TMA-multicast into both",
    ),
    # 07-10 pick their tile width (08 and 10 their K slices, 09 its stream-K share) in the kernel; the BN their .cu
    # declares (64, 8, 8, 1) only sizes the persistent grid for the most work units they can make. 10's BM (16) is A's
    # box rows.
    (
        "d_narrow_tiles",
        "07_narrow_tiles.cu",
        PERSISTENT,
        "05 with the tile width picked per shape (256, 128 or 64 columns): fewest estimated k-tile times over the waves",
    ),
    (
        "d_split_k",
        "08_split_k.cu",
        {**PERSISTENT, "args": WORKSPACE_ARGS},
        "07 plus split-K while tiles leave SMs idle: up to 8 K slices, partials in a workspace, the last warp sums them",
    ),
    (
        "d_stream_k",
        "09_stream_k.cu",
        {**PERSISTENT, "args": WORKSPACE_ARGS},
        "07 with the last wave's k tiles shared evenly by every block (stream-K, fixed-order fix-up), a ring as deep as "
        "the tile width allows, tensor maps prefetched",
    ),
    (
        "d_swap_ab",
        "10_swap_ab.cu",
        {**PERSISTENT, "args": WORKSPACE_ARGS},
        "C^T = B^T A^T: tokens as wgmma's N (16, or 64 past M = 16) in 16-row A boxes, 1-8 K slices, a 12-deep ring",
    ),
    # 11's and 12's plan is made on the host (host_plan.py) and passed as WIDTH, DP, SK; their workspace is the plan's.
    (
        "d_host_plan",
        "11_host_plan.cu",
        {**PERSISTENT, "args": (*WORKSPACE_ARGS, "WIDTH", "DP", "SK"), "planner": launch_plan},
        "09 with its plan (tile width, stream-K share) made once per shape on the host and passed as launch "
        "arguments: the first load is not behind it; the workspace sized from the plan (none where nothing splits)",
    ),
    (
        "d_tma_store",
        "12_tma_store.cu",
        {
            **PERSISTENT,
            "args": ("TMA_A", "TMA_B", "TMA_C", "C", "W", "M", "N", "K", "WIDTH", "DP", "SK"),
            "planner": launch_plan,
        },
        "11 with whole tiles' C staged in shared memory (64 x 32 swizzled chunks, two buffers a warpgroup past the ring) "
        "and written by TMA stores",
    ),
    # 13: up to 128 tokens walk F 07's swapped product and plan (TN, BNT, SLICES), above them 12 on 12's plan (WIDTH,
    # DP, SK), all made on the host (swap_plan.py); its BM (16) is TMA_A's box rows, TMA_A128 is A in 12's boxes.
    (
        "d_swap_plan",
        "13_swap_plan.cu",
        SWAP_PLAN,
        "up to M = 128, 10's swap (C^T = B^T A^T) as walk F's 07: 16, 64 or 128 tokens a tile (m64n128k16), features and "
        "K slices planned on the host, the fix-up in the accumulators' order; above, 12 on its host plan",
    ),
    # 14: clusters of 2 (its CLUSTER); SPLIT (a split pair's tile width, or 0) from cluster_plan.py, then 13's arguments.
    (
        "d_cluster_pair",
        "14_cluster_pair.cu",
        {
            **PERSISTENT,
            "args": (*SWAP_PLAN_OPERANDS, "SPLIT", *SWAP_PLAN_PLAN),
            "planner": cluster_plan.launch_plan,
        },
        "at 65-128 tokens, 128 x 128 or 128 x 64 tiles with K halved between the 2 CTAs of a cluster, the halves summed "
        "through distributed shared memory (st.async into the peer's buffer); elsewhere 13, in clusters of 2",
    ),
    # 15: 12 launched as a programmatic dependent launch (Launch.dependent), on 12's plan.
    (
        "d_dependent_launch",
        "15_dependent_launch.cu",
        {
            **PERSISTENT,
            "args": ("TMA_A", "TMA_B", "TMA_C", "C", "W", "M", "N", "K", "WIDTH", "DP", "SK"),
            "planner": launch_plan,
            "dependent": True,
        },
        "12 as a programmatic dependent launch: each block sets up while the kernel before it finishes, then waits "
        "for it (griddepcontrol) before its first load",
    ),
    # 16: 15's kernel on host_plan's plan with a stream-K k tile priced at STREAM_K_PRICE whole ones'.
    (
        "d_priced_plan",
        "16_priced_plan.cu",
        {
            **PERSISTENT,
            "args": ("TMA_A", "TMA_B", "TMA_C", "C", "W", "M", "N", "K", "WIDTH", "DP", "SK"),
            "planner": partial(launch_plan, price=STREAM_K_PRICE),
            "dependent": True,
        },
        "15 on a plan that prices a stream-K k tile at twice a whole tile's, as measured: stream-K only for a short "
        "last wave, whole tiles elsewhere",
    ),
    (
        "d_half_tiles",
        "17_half_tiles.cu",
        HALF_TILES,
        "16 with whole 64 x 256, 64 x 128 or 64 x 64 tiles where the plan finds 128-row tiles leave SMs idle: a k tile "
        "of 16-40 KB into each SM, the two consumer warpgroups splitting the columns",
    ),
    (
        "d_swap_dependent",
        "18_swap_dependent.cu",
        {**SWAP_PLAN, "dependent": True},
        "13 as a programmatic dependent launch (15's): its setup overlaps the previous kernel's end, then every thread "
        "waits for it before the first load",
    ),
    (
        "d_lean_k_loop",
        "19_lean_k_loop.cu",
        HALF_TILES,
        "17 with a consumer k loop that carries its stage, parity, barrier addresses and wgmma descriptors instead of "
        "deriving them from the k-tile count every k tile: about half the loop's instructions",
    ),
    (
        "d_tall_tiles",
        "20_tall_tiles.cu",
        {**HALF_TILES, "planner": tall_launch_plan},
        "19 with 256 x 192 tiles, each consumer warpgroup 128 x 192, where its plan finds them cheaper: 22 % fewer "
        "bytes delivered to shared memory a MAC",
    ),
    (
        "d_tile_order",
        "21_tile_order.cu",
        {**HALF_TILES, "args": (*HALF_TILES["args"], "GROUP"), "planner": ordered_launch_plan},
        "20 with its tiles walked in groups of the height whose waves read fewest rows of A and columns of B, and each "
        "block's k tiles forward and backward in turns: less of A and B from DRAM",
    ),
    (
        "d_mixed_tiles",
        "22_mixed_tiles.cu",
        {**HALF_TILES, "args": (*HALF_TILES["args"], "GROUP", "SPANS"), "planner": mixed_launch_plan},
        "21, or 256 x 192 tiles over the first columns beside 128 x 256 tiles over the rest, all whole, where its plan "
        "finds that cheaper: most MACs in tall tiles where their waves alone would not fill the blocks",
    ),
    (
        "d_tail_halves",
        "23_tail_halves.cu",
        TAIL_HALVES,
        "22, or 256 x 192 tiles whole, the last part-filled round's in halves of 128 rows where its plan finds it "
        "cheaper: no fix-up",
    ),
    (
        "d_evict_first_c",
        "24_evict_first_c.cu",
        TAIL_HALVES,
        "23 with C stored evict-first: its lines leave L2 before A's and B's, which later waves read",
    ),
]


def _stages() -> list[Stage]:
    stages = []
    for name, file, launch, what in KERNELS:
        position = int(file[:2])
        sized_by_kernel = "W" in launch.get("args", ()) and "planner" not in launch  # a planner sizes its own
        for dtype, (t, baseline) in DTYPES.items():
            stages.append(
                Stage(
                    name=f"{name}_{dtype}",
                    family=FAMILY,
                    walk="D",
                    group="ladder",
                    position=position,
                    source_path=HERE / file,
                    launches=(declared_launch(HERE / file, f"{name}<{t}>", **launch),),
                    what_changed=what,
                    dtype=dtype,
                    baseline=baseline,
                    shapes=K8,
                    pad_n_to=PAD_N_TO,
                    min_cc=90,
                    requires_arch=ARCH,
                    workspace_floats_per_mn=MAX_SPLITS if sized_by_kernel else 0,
                )
            )
    return stages


STAGES = _stages()
