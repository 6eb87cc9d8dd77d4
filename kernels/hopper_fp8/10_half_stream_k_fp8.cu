// 10 half_stream_k_fp8: walk D's 18 (kernels/hopper_d/18_half_stream_k.cu) on FP8 operands: 09 with its 64-row tiles
// shared by stream-K too. Issue 32's weakest cell above 16 tokens after 09 is 128 x 1024 x 8192 (H200, run h200-f09b:
// 66.7 % of cuBLASLt FP8; 128 x 512 x 3584 80 %): 09 walks 32 tiles of 64 x 64 whole on 32 of 132 SMs, 64 k tiles of
// 128 FP8 elements each.
// What changed: as walk D's 18, host_plan.cuh and stream_k.cuh with SHARED (each consumer warpgroup's part of a shared
// 64-row tile through 09's fix-up), on 09's operands (operands.cuh's Fp8: the partials summed before the scales), and
// the plan walk D 18's over K in 16-bit elements (a k tile of either moves the same bytes), as 09's is 17's.
// Predicted (H200): 128 x 1024 x 8192 from 64 k tiles a block to 16 shared (the same 32 tiles over all 132 blocks) and
// a fix-up: near cuBLASLt FP8; 128 x 512 x 3584 likewise; elsewhere 09's plan and times.
// N % 8 == 0, K % 16 == 0, any M.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 09's grid and dynamic shared memory (kernels/sources.py reads BM and BN here).
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
f_half_stream_k_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
                    const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* W, const float* __restrict__ scale_a,
                    const float* __restrict__ scale_b, int M, int N, int K, int ROWS, int WIDTH, int DP, int SK) {
    const operands::Fp8 ops{scale_a, scale_b};
    host_plan::run_rows<true>(ops, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK);
}
