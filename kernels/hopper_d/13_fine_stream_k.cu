// 13 fine_stream_k: 12 with stream-K allowed to cut a tile into up to 20 segments (11 and 12: 8) where the tiles are
// 128 or 64 columns and their workspace planes are small (at most 64 MiB: kernels/hopper_d/host_plan.py's fine plan),
// and a fix-up that keeps four planes' loads in flight. Where N holds few tiles (the k/v projections, N = 512 or
// 1024, at M <= 128) 11's and 12's plan had no stream-K candidate within 8 segments (16 tiles of 64 k tiles cut over
// 128 blocks need 9) and walked 8 to 16 whole 128 x 64 tiles on as many SMs, the other 116-124 idle: 09, 11 and 12's
// model prices that at 6144 k-tile units at 128 x 1024 x 4096 against 1728 for stream-K over 132 blocks. The grid is
// one block per SM wherever C has a column per block (12's, one per 8 columns, was 64 blocks at N = 512).
// The cost: the last arrival of a tile sums 10 to 20 planes; 09's fix-up reads a plane at a time (a round trip to L2
// each, about a k tile's time), so here each lane issues four planes' loads before adding them, in segment order as
// before (deterministic). Everywhere else the plan is 12's and so is the code path (whole tiles, TMA stores).
// Predicted: 128 x 1024 x 4096, 128 x 512 x 3584 and 128 x 1024 x 8192 from 57-65 % of cuBLAS (the best of 07-10) to
// 85-100 %; the same shapes at M = 1 and 16 up from 11's and 12's whole tiles too (10 swap_ab stays ahead there: its
// 16-row A boxes); the other shapes as 12.
// N % 8 == 0, K % 8 == 0, any M.
// The kernel's body: kernels/common/host_plan.cuh with FIXUP_PLANES = 4; the fix-up: stream_k.cuh.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// The persistent grid: one block per SM wherever C has a column per block (kernels/sources.py reads BM and BN here; 12's
// BN = 8 gave N = 512 at M <= 128 only 64 blocks); 12's shared memory: the ring's 192 KB, then the staging buffers.
enum : int { BM = 128, BN = 1, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES, FIXUP_PLANES = 4 };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_fine_stream_k(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, const __grid_constant__ TensorMap tma_c,
                float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int WIDTH, int DP, int SK) {
    host_plan::run<T, true, FIXUP_PLANES>(tma_a, tma_b, &tma_c, C, W, M, N, K, WIDTH, DP, SK);
}
