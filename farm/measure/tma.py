"""TMA tensor maps for the kernels that take them (walk D in 16-bit and TF32, hopper_fp8): launch args TMA_A, TMA_B,
TMA_C, TMA_A128 and TMA_B64.

Built on the host by the driver's cuTensorMapEncodeTiled through cuda-python, and passed
by value: CuPy hands a NumPy structured scalar to a kernel as a struct of its bytes, so
the 128-byte CUtensorMap travels as a 128-byte record (the kernel's TensorMap,
kernels/common/hopper.cuh). A box's rows are one 128-byte swizzle row wide along the contiguous
dimension (64 16-bit, 32 FP32 or 128 FP8 elements); out-of-range elements arrive as zeros. A is
read in boxes of tile_m rows x that width; B (K x N) in square boxes of that width, except FP8's
B, stored N x K (K-major, farm/measure/checks.py), in boxes of tile_n rows x that width. C (FP32, written by TMA
stores: walk D's 12) in boxes of C_BOX_ROWS rows, a consumer warpgroup's, x 32. TMA_A128: A again, in boxes of
A128_ROWS rows, for a kernel that runs walk D's 128-row tiles beside a path of its own tile_m (walk D's 13: 16-row
boxes for its swapped product up to 128 tokens, 12's tiles above). TMA_B64: B in boxes of 64 rows whatever the
tile_n (FP8's walk F 09, whose tile_n only sizes its grid; in 16-bit, TMA_B's square boxes).
"""

from __future__ import annotations

import numpy as np

from farm.measure.checks import FP8

SWIZZLE_BYTES = 128  # CU_TENSOR_MAP_SWIZZLE_128B: a box's inner extent is at most one 128-byte row
TENSOR_MAP = np.dtype([("opaque", np.uint64, (16,))])
C_BOX_ROWS = 64  # kernels/common/tma_store.cuh: ROWS
A128_ROWS = 128  # kernels/common/persistent_ws.cuh: BM
B64_ROWS = 64  # kernels/common/operands.cuh: B_BOX
# tf32: FP32 storage; TMA moves it as FP32 and the tensor cores read what lands as TF32
_TYPES = {
    "bf16": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
    "fp16": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
    "tf32": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
    "fp8_e4m3": "CU_TENSOR_MAP_DATA_TYPE_UINT8",
    "fp8_e4m3_e5m2": "CU_TENSOR_MAP_DATA_TYPE_UINT8",
    "fp32": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",  # C
}  # FP8 bytes: TMA copies them, never converts


def tensor_map(matrix, dtype: str, box_rows: int, box_cols: int) -> np.void:
    """A row-major 8-, 16- or 32-bit device matrix as a 2-D tiled tensor map, ready to pass as a kernel argument."""
    from cuda.bindings import driver

    rows, cols = matrix.shape
    err, tmap = driver.cuTensorMapEncodeTiled(
        getattr(driver.CUtensorMapDataType, _TYPES[dtype]),
        2,
        matrix.data.ptr,
        [driver.cuuint64_t(cols), driver.cuuint64_t(rows)],
        [driver.cuuint64_t(cols * matrix.itemsize)],
        [driver.cuuint32_t(box_cols), driver.cuuint32_t(box_rows)],
        [driver.cuuint32_t(1), driver.cuuint32_t(1)],
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuTensorMapEncodeTiled({dtype}, {rows}x{cols}, box {box_rows}x{box_cols}): {err.name}")
    return np.array([(tmap.opaque,)], dtype=TENSOR_MAP)[0]


def tensor_map_args(launch, dtype: str, operands: dict) -> dict:
    """TMA_A / TMA_B / TMA_C / TMA_A128 / TMA_B64 for a launch that names them, built over operands A, B and C."""
    width = SWIZZLE_BYTES // operands["A"].itemsize
    b_rows = launch.tile_n if dtype in FP8 else width  # FP8's B is stored N x K: its boxes run along K too
    boxes = {
        "TMA_A": ("A", dtype, launch.tile_m, width),
        "TMA_B": ("B", dtype, b_rows, width),
        "TMA_C": ("C", "fp32", C_BOX_ROWS, SWIZZLE_BYTES // 4),
        "TMA_A128": ("A", dtype, A128_ROWS, width),
        "TMA_B64": ("B", dtype, B64_ROWS, width),
    }
    return {arg: tensor_map(operands[boxes[arg][0]], *boxes[arg][1:]) for arg in launch.args if arg in boxes}
