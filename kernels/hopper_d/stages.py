"""Walk D, Hopper: BF16 and FP16 inputs, FP32 accumulate, FP32 C, from mma.sync to wgmma fed by TMA.

Every kernel is one template over the input type, registered twice like walk C's:
<name>_bf16 (baseline cublas_bf16) and <name>_fp16 (cublas_fp16). The family is built
for sm_90a alone (wgmma, setmaxnreg and the TMA paths are arch-specific), so on any other
chip its cells are skipped with the reason. Kernels taking tensor maps name them TMA_A /
TMA_B: farm/measure/tma.py builds them, A in boxes of tile_m rows x 64, B in 64 x 64 boxes.
Notes and measurements: kernels/hopper_d/README.md.
"""
from kernels.registry import Launch, ShapeRule, Stage

FAMILY = "hopper_d"
ORDER = 50
DTYPES = {"bf16": ("__nv_bfloat16", "cublas_bf16"), "fp16": ("__half", "cublas_fp16")}
ARCH = "sm_90a"
VEC8 = ShapeRule(n_multiple=8, k_multiple=8)  # 16-byte rows chunks (cp.async) and TMA's 16-byte global strides
TMA_ARGS = ("TMA_A", "TMA_B", "C", "M", "N", "K")
MAX_SPLITS = 8  # d_split_k's K slices at most: its workspace is that many M x N planes of partial sums
SMEM_128x128_3 = 3 * (128 * 64 + 64 * 128) * 2
SMEM_128x256_4 = 4 * (128 * 64 + 64 * 256) * 2


def _kernels(t: str) -> list[tuple[str, str, Launch, str]]:
    """(name, file, launch, what changed) of each kernel for input type `t`, in ladder order."""
    return [
        ("d_mma_sync", "00_mma_sync.cu", Launch(f"d_mma_sync<{t}>", 256, 128, 128, dynamic_smem=SMEM_128x128_3),
         "mma.sync m16n8k16 + ldmatrix(.trans), 128x128x64 tile, 3-stage cp.async into 128-byte-swizzled smem"),
        ("d_wgmma", "01_wgmma.cu", Launch(f"d_wgmma<{t}>", 256, 128, 128, dynamic_smem=SMEM_128x128_3),
         "wgmma m64n128k16 from shared-memory descriptors (2 warpgroups), same cp.async pipeline"),
        ("d_tma", "02_tma.cu", Launch(f"d_tma<{t}>", 256, 128, 128, TMA_ARGS, dynamic_smem=4 * (128 * 64 + 64 * 128) * 2),
         "TMA boxes (pre-swizzled, zero-filled edges) completing on mbarriers, 4 stages, issued by one thread"),
        ("d_warp_specialized", "03_warp_specialized.cu",
         Launch(f"d_warp_specialized<{t}>", 384, 128, 256, TMA_ARGS, dynamic_smem=SMEM_128x256_4),
         "128x256 tile: producer warpgroup (TMA) + 2 consumer warpgroups (m64n256k16), full/empty mbarriers, setmaxnreg"),
        ("d_persistent", "04_persistent.cu",
         Launch(f"d_persistent<{t}>", 384, 128, 256, TMA_ARGS, dynamic_smem=SMEM_128x256_4, persistent=True),
         "persistent: one block per SM loops over tiles in 16-tile-row groups (L2 reuse); next tile's loads overlap the epilogue"),
        ("d_mma_overlap", "05_mma_overlap.cu",
         Launch(f"d_mma_overlap<{t}>", 384, 128, 256, TMA_ARGS, dynamic_smem=SMEM_128x256_4, persistent=True),
         "one wgmma group kept in flight (wait_group 1): a stage is released when the next tile's wgmmas are queued"),
        ("d_multicast", "06_multicast.cu",
         Launch(f"d_multicast<{t}>", 384, 128, 256, TMA_ARGS, dynamic_smem=SMEM_128x256_4, persistent=True, cluster=2),
         "clusters of 2 vertically adjacent tiles: each CTA loads half the shared B tile, TMA-multicast into both"),
        # 07 and 08 pick their tile width (and 08 its K slices) in the kernel; their Launch's tile_n (64, 8) only sizes
        # the persistent grid for the most work units they can make.
        ("d_narrow_tiles", "07_narrow_tiles.cu",
         Launch(f"d_narrow_tiles<{t}>", 384, 128, 64, TMA_ARGS, dynamic_smem=SMEM_128x256_4, persistent=True),
         "05 with the tile width picked per shape (256, 128 or 64 columns): fewest estimated k-tile times over the waves"),
        ("d_split_k", "08_split_k.cu",
         Launch(f"d_split_k<{t}>", 384, 128, 8, ("TMA_A", "TMA_B", "C", "W", "M", "N", "K"), dynamic_smem=SMEM_128x256_4,
                persistent=True),
         "07 plus split-K while tiles leave SMs idle: up to 8 K slices, partials in a workspace, the last warp sums them"),
    ]


def _stages() -> list[Stage]:
    stages = []
    for position in range(len(_kernels(""))):
        for dtype, (t, baseline) in DTYPES.items():
            name, file, launch, what = _kernels(t)[position]
            stages.append(Stage(name=f"{name}_{dtype}", family=FAMILY, walk="D", group="ladder", position=position,
                                source=f"hopper_d/{file}", launches=(launch,), what_changed=what, dtype=dtype,
                                baseline=baseline, shapes=VEC8, min_cc=90, requires_arch=ARCH,
                                workspace_floats_per_mn=MAX_SPLITS if name == "d_split_k" else 0))
    return stages


STAGES = _stages()
