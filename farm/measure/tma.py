"""TMA tensor maps for the kernels that take them (walk D, 16-bit and TF32): launch args TMA_A and TMA_B.

Built on the host by the driver's cuTensorMapEncodeTiled through cuda-python, and passed
by value: CuPy hands a NumPy structured scalar to a kernel as a struct of its bytes, so
the 128-byte CUtensorMap travels as a 128-byte record (the kernel's TensorMap,
kernels/common/hopper.cuh). A box's rows are one 128-byte swizzle row wide (64 16-bit or 32 FP32
elements): A is read in boxes of tile_m rows x that width, B in square boxes of that width, both
128-byte swizzled; out-of-range elements arrive as zeros.
"""
from __future__ import annotations

import numpy as np

SWIZZLE_BYTES = 128  # CU_TENSOR_MAP_SWIZZLE_128B: a box's inner extent is at most one 128-byte row
TENSOR_MAP = np.dtype([("opaque", np.uint64, (16,))])
# tf32: FP32 in memory, handed to the tensor cores as it is (they read the top 19 bits)
_TYPES = {"bf16": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", "fp16": "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
          "tf32": "CU_TENSOR_MAP_DATA_TYPE_FLOAT32"}


def tensor_map(matrix, dtype: str, box_rows: int, box_cols: int) -> np.void:
    """A row-major 16- or 32-bit device matrix as a 2-D tiled tensor map, ready to pass as a kernel argument."""
    from cuda.bindings import driver

    rows, cols = matrix.shape
    err, tmap = driver.cuTensorMapEncodeTiled(
        getattr(driver.CUtensorMapDataType, _TYPES[dtype]), 2, matrix.data.ptr,
        [driver.cuuint64_t(cols), driver.cuuint64_t(rows)], [driver.cuuint64_t(cols * matrix.itemsize)],
        [driver.cuuint32_t(box_cols), driver.cuuint32_t(box_rows)], [driver.cuuint32_t(1), driver.cuuint32_t(1)],
        driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
        driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuTensorMapEncodeTiled({dtype}, {rows}x{cols}, box {box_rows}x{box_cols}): {err.name}")
    return np.array([(tmap.opaque,)], dtype=TENSOR_MAP)[0]


def tensor_map_args(launch, dtype: str, operands: dict) -> dict:
    """TMA_A / TMA_B for a launch that names them, built over operands A and B."""
    width = SWIZZLE_BYTES // operands["A"].itemsize
    boxes = {"TMA_A": ("A", launch.tile_m, width), "TMA_B": ("B", width, width)}
    return {arg: tensor_map(operands[boxes[arg][0]], dtype, *boxes[arg][1:]) for arg in launch.args if arg in boxes}
