"""On a real GPU: the FP8 classes end to end. The harness's FP8 inputs and scales against a host E4M3 and E5M2
written from the spec; cuBLASLt FP8, torch._scaled_mm and the hopper_fp8 stages of both classes (fp8_e4m3, and
fp8_e4m3_e5m2 with B in E5M2) verified and timed at tile-multiple and odd shapes; a planted kernel that ignores the
scales caught. cuBLASLt's refusal of E5M2 x E5M2 on Hopper, why the second class is E4M3 x E5M2, is checked too.

05 (split_k_fp8) and 06 (swap_ab_fp8) also at few tokens, every branch of their plans on 132 SMs (06 swaps to M = 64:
kernels/hopper_fp8/06_swap_ab_fp8.cu's plan_for; above, and in 05, split_k_fp8.cuh's slices_for), C poisoned:
  1 x 4096 x 4096       06: 16 tokens x 128 features, K in 4 slices; 05: 16 tiles of 128 x 256, 8 slices
  1 x 1024 x 4096       06: 16 x 64 (one consumer warpgroup), 8 slices
  3 x 264 x 1040        06: 16 x 64, 5 slices over 9 k tiles (uneven), the last k tile partial, N off 64
  16 x 14336 x 4096     06: 16 x 128, whole K (112 tiles)
  17 x 520 x 832        06: 64 tokens (2 of 4 A boxes loaded), 64 features, 4 slices, N off 64, K tail
  64 x 4096 x 4096      06: 64 x 64, 2 slices
  64 x 136 x 528        06: 64 x 64, whole K, N off 64, K tail
  100 x 1000 x 2064     06: 05's path in 16- and 64-row boxes, 4 tiles x 8 slices over 17 k tiles, K tail
  128 x 4096 x 4096     06: 05's path, 16 tiles x 8 slices (05 the same in whole-tile boxes)
07 (swap_plan_fp8) at every branch of its host plan (kernels/hopper_fp8/swap_plan.py, tests/test_fp8_swap_plan.py
holds the same choices): tokens a tile (TN) 16, 64, 128 or 05's path above, features a tile 128 or 64, K whole or in
slices, at N and K off the tile (SWAP_PLAN_SHAPES below); its B-in-E5M2 build at one shape of each branch, both of
wgmma's operand orders (swapped: .e5m2.e4m3; 05's path: .e4m3.e5m2).
08 (tile_plan_fp8) at every branch of its host plan (kernels/hopper_fp8/tile_plan.py, tests/test_fp8_tile_plan.py holds
the same choices): 07's swapped branches, and above 128 tokens 128 x 256 and 128 x 128 tiles with K whole and in slices,
at M, N and K off the tile (TILE_PLAN_SHAPES below).
09 (half_tiles_fp8) at every branch of its host plan (walk D 17's at K / 2, kernels/hopper_fp8/stages.py; tests/test_fp8_
half_tiles_plan.py holds the same choices): 64-row tiles of 64, 128 and 256 columns, 128-row tiles whole and stream-K,
at M, N and K off the tile (HALF_TILES_SHAPES below); its B-in-E5M2 build at one shape of four branches.
10 (swap_dependent_fp8), 07 as a programmatic dependent launch, at 07's shapes: back to back in the timed graphs each
launch's setup overlaps the one before, whose counters and workspace it must not touch before griddepcontrol.wait.
Each cell's post-timing check runs the last timed batch again on fresh inputs, so the arrival counters must be back
at zero after every launch.

Run with `pytest -m gpu`; skipped cleanly where no GPU is present (and the Hopper parts on other GPUs).
"""

import numpy as np
import pytest
from fp8_host import E4M3_MAX, E5M2_MAX, e4m3_round, e4m3_values, e5m2_round, e5m2_values
from test_gpu import QUICK
from test_gpu_walkd_shapes import HALF_TILES_SHAPES as WALK_D_HALF_TILES

from farm.cells import Cell
from farm.measure.checks import FP8
from kernels.registry import catalog, stage_named

pytestmark = pytest.mark.gpu

FP8_STAGES = [s.name for s in catalog() if s.dtype in FP8]
TILE_MULTIPLE = [(256, 256, 256), (512, 768, 384), (1024, 1024, 1024)]
ODD = [(1000, 264, 272), (129, 136, 48), (257, 1000, 528)]  # M any, N % 8, K % 16: what the class's kernels take
FEW_TOKENS = [
    (1, 4096, 4096),
    (1, 1024, 4096),
    (3, 264, 1040),
    (16, 14336, 4096),
    (17, 520, 832),
    (64, 4096, 4096),
    (64, 136, 528),
    (100, 1000, 2064),
    (128, 4096, 4096),
]
# 07's plan on 132 SMs, (TN, features a tile, K slices); 0: 05's 128 x 256 tiles
SWAP_PLAN_SHAPES = {
    (1, 4096, 4096): (16, 128, 4),
    (1, 1024, 4096): (16, 64, 8),
    (2, 8, 48): (16, 64, 1),  # one tile of 8 features, one partial k tile
    (3, 264, 1040): (16, 64, 5),  # 9 k tiles in 5 uneven slices, the last k tile partial, N off 64
    (5, 3080, 1040): (16, 128, 5),  # N off 128
    (16, 14336, 4096): (16, 128, 1),
    (17, 520, 832): (64, 64, 7),  # 2 of 4 A boxes loaded
    (33, 3080, 2064): (64, 128, 5),
    (40, 9008, 48): (64, 128, 1),
    (64, 136, 528): (64, 64, 1),
    (97, 8, 48): (128, 64, 1),  # one tile, one partial k tile, 7 of 8 A boxes
    (65, 8200, 1040): (128, 64, 1),
    (90, 9008, 48): (128, 128, 1),
    (100, 1000, 2064): (128, 64, 5),
    (120, 2568, 3088): (128, 128, 5),
    (128, 4096, 4096): (128, 128, 4),
    (128, 1024, 4096): (128, 64, 8),
    (129, 136, 48): (0, 256, 1),  # 05's path, whole K
    (200, 1000, 2064): (0, 256, 8),  # 05's path, 8 slices
}
# 08 (tile_plan_fp8) on 132 SMs, (TN, features a tile, K slices) from kernels/hopper_fp8/tile_plan.py
# (tests/test_fp8_tile_plan.py holds the same choices): 07's swapped branches, and above 128 tokens 128 x 256 and
# 128 x 128 tiles, K whole and in slices, at M, N and K off the tile (TN 0: 128-row tiles)
TILE_PLAN_SHAPES = {
    (1, 4096, 4096): (16, 128, 4),
    (1, 1024, 4096): (16, 64, 8),
    (2, 8, 48): (16, 64, 1),
    (3, 264, 1040): (16, 64, 5),
    (5, 3080, 1040): (16, 128, 5),
    (16, 14336, 4096): (16, 128, 1),
    (17, 520, 832): (64, 64, 7),
    (33, 3080, 2064): (64, 128, 5),
    (40, 9008, 48): (64, 128, 1),
    (64, 136, 528): (64, 64, 1),
    (97, 8, 48): (128, 64, 1),
    (90, 9008, 48): (128, 128, 1),
    (100, 1000, 2064): (128, 64, 5),
    (128, 4096, 4096): (128, 128, 4),
    (129, 136, 48): (0, 128, 1),
    (200, 1000, 2064): (0, 128, 5),
    (1000, 264, 2064): (0, 128, 5),  # the last tile row 104 rows: 7 of 8 A boxes
    (1000, 3000, 400): (0, 256, 1),
    (1024, 512, 3584): (0, 128, 4),
    (1024, 1024, 8192): (0, 256, 4),
}
# 09 (half_tiles_fp8): its plan is walk D 17's at K / 2, so 17's test shapes (tests/test_gpu_walkd_shapes.py) at 2K take
# the same branches (64-row tiles at each width, one wave and several, odd M, N off the tile, K off 128; 128-row tiles
# whole and stream-K), and the k/v projection as the LLM plan has it
HALF_TILES_SHAPES = {(m, n, 2 * k): branch for (m, n, k), branch in WALK_D_HALF_TILES.items()} | {
    (1024, 512, 3584): (64, 64, 0)
}
# 07 with B in E5M2: one shape of each branch (TN 16, 64 and 128, sliced and whole; 05's path whole and sliced)
SWAP_PLAN_E5M2_SHAPES = [
    (1, 4096, 4096),
    (3, 264, 1040),
    (17, 520, 832),
    (100, 1000, 2064),
    (129, 136, 48),
    (200, 1000, 2064),
]
# 09 with B in E5M2: 64-row tiles at 64 and 256 columns, 128-row tiles whole and stream-K
HALF_TILES_E5M2_SHAPES = [(1024, 512, 3584), (320, 28672, 528), (2048, 2048, 4096), (100, 2056, 8208)]


@pytest.fixture(scope="module")
def checks():
    import cupy

    from farm.measure.checks import Checks, compile_checks

    cupy.cuda.Device(0).use()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    return Checks(compile_checks(f"sm_{props['major']}{props['minor']}").module, props["multiProcessorCount"])


@pytest.fixture(scope="module")
def measurer():
    from farm.measure.gpu import GpuMeasurer

    return GpuMeasurer(options=QUICK)


def _hopper() -> bool:
    import cupy

    return cupy.cuda.runtime.getDeviceProperties(0)["major"] == 9


def test_fp8_operands_are_scaled_normals_rounded_to_nearest_even(checks):
    import cupy

    from farm.measure.checks import new_scales

    scales = new_scales()
    a, b = checks.random_operands("fp8_e4m3", 300, 200, 500, seed=7, scales=scales)
    assert a.shape == (300, 500) and b.shape == (200, 500) and a.dtype == b.dtype == cupy.uint8  # B stored N x K
    a32 = cupy.empty((300, 500), dtype=cupy.float32)
    checks._normals_into(a32, 2 * 7)  # the FP32 normals A was made from
    a32 = a32.get()
    scale_a, scale_b = (float(s) for s in scales[:, 0].get())
    assert scale_a == np.float32(np.abs(a32).max()) / np.float32(E4M3_MAX)  # amax lands on 448
    assert 0.005 < scale_a < 0.02 and 0.005 < scale_b < 0.02 and scale_a != scale_b
    expected = e4m3_round(a32 / np.float32(scale_a))
    assert np.array_equal(a.get(), expected)
    wide = checks.to_float64(a, "fp8_e4m3", scales, operand=0).get()
    assert np.array_equal(wide, e4m3_values()[expected] * scale_a)  # exact dequantised values
    assert np.abs(wide - a32).max() <= 2.0**-4 * np.abs(a32).max()  # within E4M3's half-ulp at the top binade
    again = cupy.empty_like(a)
    checks.refill(again, cupy.empty_like(b), "fp8_e4m3", 7, scales)
    assert np.array_equal(again.get(), a.get())


def test_e5m2_operand_is_scaled_normals_rounded_to_nearest_even(checks):
    """fp8_e4m3_e5m2: A as fp8_e4m3's (same seed, same codes), B the normals scaled so that amax lands on 57344 and
    rounded to E5M2 (2 mantissa bits), dequantised exactly."""
    import cupy

    from farm.measure.checks import new_scales

    e4m3_scales, scales = new_scales(), new_scales()
    a4, _ = checks.random_operands("fp8_e4m3", 300, 200, 500, seed=7, scales=e4m3_scales)
    a, b = checks.random_operands("fp8_e4m3_e5m2", 300, 200, 500, seed=7, scales=scales)
    assert a.shape == (300, 500) and b.shape == (200, 500) and b.dtype == cupy.uint8  # B stored N x K
    assert np.array_equal(a.get(), a4.get()) and float(scales[0, 0]) == float(e4m3_scales[0, 0])
    b32 = cupy.empty((200, 500), dtype=cupy.float32)
    checks._normals_into(b32, 2 * 7 + 1)  # the FP32 normals B was made from
    b32 = b32.get()
    scale_b = float(scales[1, 0].get())
    assert scale_b == np.float32(np.abs(b32).max()) / np.float32(E5M2_MAX)
    expected = e5m2_round(b32 / np.float32(scale_b))
    assert np.array_equal(b.get(), expected)
    wide = checks.to_float64(b, "fp8_e4m3_e5m2", scales, operand=1).get()
    assert np.array_equal(wide, e5m2_values()[expected] * scale_b)
    assert np.abs(wide - b32).max() <= 2.0**-3 * np.abs(b32).max()  # within E5M2's half-ulp at the top binade


def test_cublaslt_refuses_e5m2_times_e5m2_on_hopper(checks, monkeypatch):
    """Why the second FP8 class is E4M3 x E5M2: cuBLASLt's FP8 matmul has no E5M2 x E5M2 (its docs' FP8 type table;
    PyTorch's _scaled_mm refuses the pair for that reason). Asked for it, the heuristic finds nothing."""
    if not _hopper():
        pytest.skip("FP8 baselines need Hopper")
    from farm.measure import cublas
    from farm.measure.checks import new_scales

    monkeypatch.setitem(cublas.FP8_DATA_TYPES, "e5m2_x_e5m2", (29, 29))
    with pytest.raises(cublas.Unavailable, match="no algorithm for e5m2_x_e5m2 4096x4096x4096"):
        cublas.CublasLtGemm(
            cublas.VendorContext.on_current_device(),
            "CUBLAS_COMPUTE_32F",
            "e5m2_x_e5m2",
            4096,
            4096,
            4096,
            new_scales(),
        )


def test_fp8_operands_need_their_scales(checks):
    with pytest.raises(ValueError, match="scales"):
        checks.random_operands("fp8_e4m3", 16, 16, 16, seed=1)


@pytest.mark.parametrize("shape", TILE_MULTIPLE + ODD, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("stage", FP8_STAGES)
def test_fp8_stage_verifies_or_skips_with_reason(measurer, stage, shape):
    row = measurer.measure(Cell(stage, *shape), "gpu-test")
    if not _hopper():
        assert row["status"] == "skipped" and ("needs" in row["status_reason"]), row["status_reason"]
        return
    if row["status"] == "skipped":  # only a library refusing a shape (torch._scaled_mm wants multiples of 16)
        assert shape in ODD and stage.startswith("torch_"), row["status_reason"]
        return
    assert row["status"] == "ok", (row["status"], row["status_reason"])
    assert row["verified"] and row["mismatches"] == 0 and row["max_scaled_error"] <= 1.0
    assert row["post_checked"] and row["limit_check"] == "peak"
    assert row["launch_method"] == row["baseline_launch_method"] == "cuda_graph"
    if row["family"] == "baseline":
        assert row["verify_reference"].startswith("fp64 product")
    else:
        assert row["baseline"] == stage_named(stage).baseline and row["spill_bytes"] in (0, None)
    if stage.startswith("cublaslt_"):
        assert row["library_algorithm"].startswith("cuBLASLt ")
    print(
        f"{stage} {shape}: max scaled error {row['max_scaled_error']:.3g}, max abs error {row['max_abs_error']:.3g}, "
        f"{row['tflops']:.0f} TFLOPS, {row['pct_of_baseline']:.1f} % of {row['baseline']}"
    )


@pytest.mark.parametrize(
    "stage, shape",
    [(stage, shape) for stage in ("f_split_k_fp8", "f_swap_ab_fp8") for shape in FEW_TOKENS]
    + [(stage, shape) for stage in ("f_swap_plan_fp8", "f_swap_dependent_fp8") for shape in SWAP_PLAN_SHAPES]
    + [("f_swap_plan_fp8_e4m3_e5m2", shape) for shape in SWAP_PLAN_E5M2_SHAPES]
    + [("f_tile_plan_fp8", shape) for shape in TILE_PLAN_SHAPES]
    + [("f_half_tiles_fp8", shape) for shape in HALF_TILES_SHAPES]
    + [("f_half_tiles_fp8_e4m3_e5m2", shape) for shape in HALF_TILES_E5M2_SHAPES],
    ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else v,
)
def test_split_and_swapped_stages_verify_at_few_tokens(measurer, stage, shape):
    row = measurer.measure(Cell(stage, *shape), "gpu-test")
    if not _hopper():
        assert row["status"] == "skipped" and "needs sm_90a" in row["status_reason"], row["status_reason"]
        return
    assert row["status"] == "ok", (row["status"], row["status_reason"])
    assert row["verified"] and row["mismatches"] == 0 and row["max_scaled_error"] <= 1.0
    assert row["post_checked"] and row["spill_bytes"] in (0, None) and row["baseline"] == stage_named(stage).baseline
    print(
        f"{stage} {shape}: max scaled error {row['max_scaled_error']:.3g}, {row['median_ms'] * 1e3:.1f} us, "
        f"{row['pct_of_baseline']:.1f} % of {row['baseline']}"
    )


@pytest.mark.parametrize("dtype", ["fp8_e4m3", "fp8_e4m3_e5m2"])
def test_a_kernel_that_ignores_the_scales_fails_verification(checks, dtype):
    """The tolerance is far tighter than a dropped scale: the cuBLASLt product with its scale pointers aimed at
    ones is off by 1/(scale_a scale_b), ~1e4, and every element fails against the FP64 product."""
    import cupy

    if not _hopper():
        pytest.skip("FP8 baselines need Hopper")
    from farm.measure.checks import new_scales
    from farm.measure.cublas import CublasLtGemm, VendorContext
    from farm.measure.sizing import check_fp64, reference_plan
    from farm.measure.tolerance import tolerance

    m = n = k = 512
    scales = new_scales()
    a, b = checks.random_operands(dtype, m, n, k, seed=3, scales=scales)
    ones = new_scales() + 1
    c = cupy.empty((m, n), dtype=cupy.float32)
    CublasLtGemm(VendorContext.on_current_device(), "CUBLAS_COMPUTE_32F", dtype, m, n, k, scales=ones)(a, b, c)
    device = {"arch": "sm_90", "sm_count": 132, "memory_bytes": 80 << 30, "max_sm_clock_mhz": 1980}
    got = check_fp64(
        checks,
        c,
        a,
        b,
        dtype,
        tolerance(dtype, k),
        reference_plan(m, n, k, device),
        np.random.default_rng(0),
        scales,
    )
    assert not got["verified"] and got["mismatches"] > 0.99 * m * n
