// 07 narrow_tiles: 05 with the tile width picked per shape. 05's 128x256 tiles are the right
// size for 4096^3 and up, but at 1024^3 they make 32 tiles for 132 SMs (a quarter of the chip
// busy; 02's 128x128 tiles made 64 and measured 62 % of cuBLAS), and a 4096-wide decode GEMM
// (M = 16) makes 16. Here every block computes the same plan from M, N, K and its grid
// (persistent_ws::plan_for): 256, 128 or 64 columns a tile, whichever gives the fewest
// estimated k-tile times over the waves of tiles, a k tile of width BN costing BN + 32 (the
// narrower wgmma m64n128k16 / m64n64k16 read as much of A from shared memory as m64n256k16
// for half or a quarter of the math). 1024^3 gets 128 tiles of 128x64; 2048^3 and up keep
// 128x256, so their machine code path is 05's. One kernel holds the three widths (the branch
// is uniform); the ring's stages keep 05's size, so the same tensor maps serve every width.
// The launch's tile_n of 64 only sizes the persistent grid: at most one block per 128x64 tile.
// N % 8 == 0, K % 8 == 0, any M.
// The kernel's body is kernels/common/persistent_ws.cuh (run_per_shape with MAX_SPLITS = 1).
#include "persistent_ws.cuh"

// The persistent grid: at most one block per 128x64 tile, the narrowest it picks (kernels/sources.py reads BM and BN here before the header's 128x256 ring's).
enum : int { BM = 128, BN = 64 };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_narrow_tiles(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    persistent_ws::run_per_shape<T, 1>(tma_a, tma_b, C, nullptr, nullptr, M, N, K);
}
