"""Walk C, half precision: FP16 and BF16 inputs, FP32 accumulate, FP32 C (RTX 4090 write-up).

Every kernel is one template over the input type; each is registered twice, as
<name>_fp16 (__half, baseline cublas_fp16) and <name>_bf16 (__nv_bfloat16 bits,
baseline cublas_bf16). Published figures: the write-up's 4096^3 numbers on an RTX 4090,
ms derived from its TFLOPS (2*4096^3 flops), % of PyTorch's matmul in the same input
precision. It gives none for the SIMT port ("about 1/4 of PyTorch"), WMMA naive or the
pipeline variant ("slower than double buffering").
"""

from pathlib import Path

from kernels.sources import declared_launch
from kernels.stage import Launch, Published, ShapeRule, Stage

FAMILY = "half_c"
ORDER = 40  # families sort by this in the catalog
HERE = Path(__file__).resolve().parent
DTYPES = {"fp16": ("__half", "cublas_fp16"), "bf16": ("__nv_bfloat16", "cublas_bf16")}
SOURCE = "walk C: 'Learn CUTLASS the hard way' write-up, RTX 4090, 4096^3"
_FLOPS_4096 = 2 * 4096**3

VEC8 = ShapeRule(n_multiple=8, k_multiple=8)  # 16-byte chunks of 8 elements along N (B) and K (A)
FRAG16 = ShapeRule(m_multiple=16, n_multiple=16, k_multiple=16)  # whole 16x16 fragments straight from global memory

# Ladder configurations, (BM, BN, BK, WM, WN[, STAGES]); kernels/tuning.py varies the last two kernels'.
SIMT_WARPTILE = (128, 128, 16, 64, 64, 1)
WMMA_DBUF = (128, 128, 32, 64, 32)
WMMA_PIPE = (128, 128, 32, 64, 32, 3)


def _published(tflops: float, pct: float, note: str = "") -> Published:
    return Published(
        device="NVIDIA GeForce RTX 4090",
        m=4096,
        n=4096,
        k=4096,
        ms=round(_FLOPS_4096 / tflops / 1e9, 4),
        pct_of_baseline=pct,
        source=f"{SOURCE}; % of PyTorch matmul in the same precision{note}",
    )


def wmma_stage_bytes(bm: int, bn: int, bk: int) -> int:
    """One shared-memory stage of the WMMA kernels: As[bm][bk + 8] + Bs[bk][bn + 8] 16-bit elements."""
    return 2 * (bm * (bk + 8) + bk * (bn + 8))


def wmma_smem(bm: int, bn: int, bk: int, wm: int, wn: int, stages: int) -> int:
    """Dynamic shared memory of a WMMA kernel with `stages` buffers (at least the epilogue's 1 KB per warp)."""
    warps = (bm // wm) * (bn // wn)
    return max(stages * wmma_stage_bytes(bm, bn, bk), warps * 1024)


def simt_smem(bm: int, bn: int, bk: int, stages: int) -> int:
    """h_simt_warptile keeps FP32 tiles: stages x (As[bk][bm + 4] + Bs[bk][bn]) floats."""
    return stages * bk * (bm + 4 + bn) * 4


def dbuf_launch(t: str, bm: int, bn: int, bk: int, wm: int, wn: int) -> Launch:
    return Launch(
        f"h_wmma_dbuf<{t}, {bm}, {bn}, {bk}, {wm}, {wn}>",
        32 * (bm // wm) * (bn // wn),
        bm,
        bn,
        dynamic_smem=wmma_smem(bm, bn, bk, wm, wn, 2),
    )


def pipe_launch(t: str, bm: int, bn: int, bk: int, wm: int, wn: int, stages: int) -> Launch:
    return Launch(
        f"h_wmma_pipe<{t}, {bm}, {bn}, {bk}, {wm}, {wn}, {stages}>",
        32 * (bm // wm) * (bn // wn),
        bm,
        bn,
        dynamic_smem=wmma_smem(bm, bn, bk, wm, wn, stages),
    )


def _kernels(t: str) -> list[tuple[int, str, str, Launch, str, ShapeRule, int]]:
    """(position, name, file, launch, what changed, shapes, min_cc) of each kernel for input type `t`."""
    bm, bn, bk, wm, wn, s = SIMT_WARPTILE
    bf16 = t == "__nv_bfloat16"
    return [
        (
            0,
            "h_simt_warptile",
            "00_simt_warptile.cu",
            Launch(
                f"h_simt_warptile<{t}, {bm}, {bn}, {bk}, {wm}, {wn}, {s}>",
                32 * (bm // wm) * (bn // wn),
                bm,
                bn,
                dynamic_smem=simt_smem(bm, bn, bk, s),
            ),
            "c_warptile ported: 16-byte loads of 8 inputs widened to FP32 in shared memory, FFMA, no tensor cores",
            VEC8,
            80 if bf16 else 70,
        ),
        (
            1,
            "h_wmma_naive",
            "01_wmma_naive.cu",
            declared_launch(HERE / "01_wmma_naive.cu", f"h_wmma_naive<{t}>"),
            "tensor cores via WMMA: one 16x16 C tile per warp, fragments loaded straight from global memory",
            FRAG16,
            80 if bf16 else 70,
        ),
        (
            2,
            "h_wmma_warptile",
            "02_wmma_warptile.cu",
            declared_launch(HERE / "02_wmma_warptile.cu", f"h_wmma_warptile<{t}>"),
            "128x128x32 block tile in padded shared memory, 8 warps of 64x32 (4x2 fragments each)",
            VEC8,
            80 if bf16 else 70,
        ),
        (
            3,
            "h_wmma_dbuf",
            "03_wmma_dbuf.cu",
            dbuf_launch(t, *WMMA_DBUF),
            "two shared-memory buffers: next tile's global loads overlap the MMAs, one barrier per k step",
            VEC8,
            80 if bf16 else 70,
        ),
        (
            4,
            "h_wmma_pipe",
            "04_wmma_pipe.cu",
            pipe_launch(t, *WMMA_PIPE),
            "cp.async pipeline (the write-up's cuda::pipeline variant): 3 stages, global -> shared without registers",
            VEC8,
            80,
        ),
    ]


PUBLISHED = {
    ("h_wmma_warptile", "fp16"): _published(55.4, 34.4),
    ("h_wmma_warptile", "bf16"): _published(58.2, 40.1),
    # The write-up's CUTLASS table gives one "Double Buffered" column without saying its input precision.
    ("h_wmma_dbuf", "fp16"): _published(83.852, 57.3, "; the table does not state fp16 or bf16"),
    ("h_wmma_dbuf", "bf16"): _published(83.852, 57.3, "; the table does not state fp16 or bf16"),
}


def _stages() -> list[Stage]:
    stages = []
    for i in range(len(_kernels("__half"))):  # ladder order, fp16 then bf16 at each step
        for dtype, (t, baseline) in DTYPES.items():
            position, name, file, launch, what, shapes, min_cc = _kernels(t)[i]
            stages.append(
                Stage(
                    name=f"{name}_{dtype}",
                    family=FAMILY,
                    walk="C",
                    group="ladder",
                    position=position,
                    source_path=HERE / file,
                    launches=(launch,),
                    what_changed=what,
                    dtype=dtype,
                    baseline=baseline,
                    shapes=shapes,
                    min_cc=min_cc,
                    published=PUBLISHED.get((name, dtype)),
                )
            )
    return stages


STAGES = _stages()
