// Block-order remap for L2 reuse (the TF32 write-up's grid swizzle): consecutive
// block ids (the launch order, blockIdx.x fastest) walk C in vertical strips W
// tiles wide, one row of W tiles after another, so the blocks resident together
// read W column panels of B and a few row panels of A, instead of one row panel
// of A and every column panel of B. A grid whose width is not a multiple of W
// ends in a narrower strip; the mapping stays a bijection.
#pragma once

template <int W>
__device__ __forceinline__ void column_strips(int& tile_row, int& tile_col) {
    const int gx = gridDim.x, gy = gridDim.y;
    const int pid = blockIdx.y * gx + blockIdx.x;
    const int strip = pid / (W * gy);        // which strip of W tile columns
    const int w = min(W, gx - W * strip);    // its width (the last one may be narrower)
    const int local = pid - strip * W * gy;  // 0 .. w*gy - 1, row-major inside the strip
    tile_row = local / w;
    tile_col = W * strip + local % w;
}
