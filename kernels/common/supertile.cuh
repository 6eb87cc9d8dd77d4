// Block-order remap for L2 reuse: consecutive block ids (the order the hardware
// launches them, blockIdx.x fastest) walk C in 4x4 squares of tiles instead of
// whole tile rows, so blocks resident together share the A rows and B columns
// they read. Grids whose dims are not multiples of 4 get narrower/shorter
// squares at the right and bottom edges; the mapping stays a bijection.
#pragma once

__device__ __forceinline__ void supertile_4x4(int& tile_row, int& tile_col) {
    const int gx = gridDim.x, gy = gridDim.y;
    const int pid = blockIdx.y * gx + blockIdx.x;
    const int band = pid / (4 * gx);            // band of 4 tile rows
    const int h = min(4, gy - 4 * band);        // tile rows in this band (last band may have fewer)
    const int local = pid - band * 4 * gx;      // 0 .. h*gx-1
    const int square = local / (4 * h);         // every square but the band's last is 4 wide
    const int w = min(4, gx - 4 * square);      // tile columns in this square
    const int within = local - square * 4 * h;  // 0 .. h*w-1, row-major inside the square
    tile_row = 4 * band + within / w;
    tile_col = 4 * square + within % w;
}
