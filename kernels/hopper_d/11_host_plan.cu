// 11 host_plan: 09 with its plan made on the host, once per shape, and passed as launch arguments.
// 07-10 each evaluate their plan (tile width, K slices, stream-K share) in the kernel, in warp 0 before the block
// barrier that precedes the first TMA load: a candidate a lane, each a chain of integer divisions by the block
// count. On an H100 that cost about 0.25 us a launch, 3-4 % of a 1024^3 GEMM (7.7 us): 09 restricted to whole waves
// ran at 07's 86 % of cuBLAS against 09's 81 %, and at 2048^3 05, which plans nothing, led every planning stage
// (93 % against 90-91 %). Here the same model, 09's, lives in Python (kernels/hopper_d/host_plan.py, its one
// source for this stage) and runs once when a cell's launch is built; the kernel receives WIDTH (256, 128 or 64
// columns), DP (tiles walked whole) and SK (tiles after them shared by stream-K) and starts at once: thread 0
// prefetches the tensor maps and sets up the ring's barriers, one barrier, then the producer's first load. The
// block's own share still needs two divisions by the grid (Schedule::begin), on stream-K plans only. The workspace
// is sized from the plan too: none where nothing is shared (1024^3 to 4096^3 on 132 SMs), 3 planes of M x N at
// 8192^3, where 08-10 always get 8.
// Predicted: 1024^3 at or above 07's 84-86 % of cuBLAS (its plan and tiles, 128x64 in whole waves, 09's 8-deep
// ring, no plan on the path); 2048^3 at 05's 93 % (05's 128x256 tiles and code path after one barrier); 4096^3 and
// 8192^3 as 09 (same schedule), 8192^3 perhaps a little better with 3 workspace planes instead of 8 (untested:
// nothing here has run on a GPU yet).
// The kernel's body: kernels/common/host_plan.cuh (shared with 12); pipeline, schedule and fix-up: stream_k.cuh, as 09.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"

// The persistent grid, as 09's: one block per SM wherever a 128x8 strip count allows (kernels/sources.py reads BM and
// BN here before the header's 128x256 ring's); host_plan.py plans for the grid this makes.
enum : int { BM = 128, BN = 8 };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_host_plan(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* __restrict__ W,
            int M, int N, int K, int WIDTH, int DP, int SK) {
    host_plan::run<false>(operands::Bit16<T>{}, tma_a, tma_b, nullptr, C, W, M, N, K, WIDTH, DP, SK);
}
