// 17 lean_fixup: 16 with a leaner stream-K fix-up, and stream-K priced as a whole k tile again where A and B stay in L2.
// Where 12's shared k tiles went (Nsight Compute, H100, README.md, 16's section): at 1024 x 512 x 3584 and 1024 x 1024 x
// 8192, where A and B fit in L2 and DRAM bytes equal 16's, 12's warps stalled on long scoreboard 40-48 % of samples
// (16: 17-18 %) and on memory barriers 6-9 % (16: none): the fix-up's partials stored, fenced lane by lane, counted,
// and read back plane after plane through L2. Where B outgrows L2, stream-K's blocks also lose L2's sharing of A and B
// (DRAM reads 8x at 1024 x 3584 x 18944), which no fix-up saves.
// What changed: the fix-up fences once a warp (after __syncwarp, lane 0's fence is cumulative) and keeps two planes'
// loads in flight, summed in the same order (stream_k::last_segment_sums with PAIRS); the plan
// (host_plan.resident_plan) prices a stream-K k tile as a whole one where A and B (16-bit) total 40 MB or less,
// else as 16 does.
// Predicted (H100): where the plan now shares k tiles (1024 x 512 x 3584: 64 tiles of 128 x 64 over 132 blocks) from
// 16's 65-70 % toward cuBLAS, if the fix-up's stalls were most of 12's loss there; elsewhere 16's plan and numbers.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 12's persistent grid and shared memory (kernels/sources.py reads BM and BN here before the header's ring's).
enum : int { BM = 128, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_lean_fixup(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, const __grid_constant__ TensorMap tma_c,
             float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int WIDTH, int DP, int SK) {
    host_plan::run<T, true, true, true>(tma_a, tma_b, &tma_c, C, W, M, N, K, WIDTH, DP, SK);
}
