// 05 split_k_fp8: walk D's 08 step on 03, for shapes whose 128 x 256 tiles leave SMs idle. An LLM layer at 128 tokens
// is one tile row: 128 x 4096 x 4096 makes 16 tiles for 132 SMs, and 03 ran it at 31 % of cuBLASLt FP8 (128 x 4096 x
// 14336: 37 %; 128 x 8192 x 8192: 67 %). Here every block works out the same plan from the shape and the grid: while
// the tiles alone leave blocks idle, each tile's K is cut into S slices (as many as the idle blocks allow, at most
// SPLITS, the launch's, and at most its k tiles), and the persistent grid (one block per SM, up to tiles x SPLITS) walks
// tile-slice units, a tile's slices side by side. Each consumer warp stores its slice's scaled partial 16 x 256 rows to
// plane z of the workspace W and counts its arrival on a per-(tile, warp) counter; the warp that arrives last adds the
// S planes in slice order (the same sum whichever slice came last), 64 columns at a time, each plane's 16 loads a lane
// issued together (walk D's 08 lost 2-7x to a loop over planes inside each element), stores C and zeroes its counter
// for the next launch (counters live in module memory, zero when the module loads). Where the tiles fill the grid, S is
// 1 and the walk is 03's. N % 8 == 0, K % 16 == 0, any M.
// The kernel's body is kernels/common/split_k_fp8.cuh (one TMA box each of A and B a k tile: the whole tile's rows).
#include "split_k_fp8.cuh"

__device__ unsigned int f05_arrivals[split_k_fp8::ARRIVALS];  // one per (tile, consumer warp), zero between launches

__global__ void __launch_bounds__(persistent_fp8::THREADS, 1)
f_split_k_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* W,
              const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K, int max_splits) {
    split_k_fp8::run<persistent_fp8::BM, persistent_fp8::BN>(tma_a, tma_b, C, W, f05_arrivals, scale_a, scale_b, M, N, K, max_splits);
}
