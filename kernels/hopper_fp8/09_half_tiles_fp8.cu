// 09 half_tiles_fp8: walk D's 17 (kernels/hopper_d/17_half_tiles.cu) on FP8 operands. Issue 32's weakest cells are the
// LLM shapes at 128 and 1024 tokens: on an H100 (run h100-llmf8b, in blocks) 128 x 4096 x 4096 at 53.8 % of cuBLASLt
// FP8 and 1024 x 512 x 3584 at 54.2 %, 15 of 72 shapes below 0.9x. Walk D's 17 runs those shapes' BF16 at 84-97 % of
// cuBLAS, with the same bytes a k tile (128-byte rows of A and B). 07 and 08 load A in 16-row boxes (8 TMA issues a
// 128-row k tile) and meet K slices through a fix-up; the tried 09 (pair tiles, branch walkf09) took 0.4-0.55 us a
// 64-row k tile on that pipeline, where 17 takes about 0.2 us.
// What changed: 17's pipeline and plan, the operands FP8 (kernels/common/operands.cuh: B stored N x K and read
// K-major by m64nNk32 E4M3 wgmma, a k tile 128 elements deep, the accumulators dequantised before C is stored):
// host_plan.cuh, stream_k.cuh at ROWS 64 or 128, A in one box of 64 rows (TMA_A) or 128 (TMA_A128), B in 64-row boxes
// (TMA_B64), C by TMA stores (TMA_C), a programmatic dependent launch; the plan walk D 17's with K in 16-bit elements
// (a k tile of either moves the same bytes and takes the same tensor time), so the same tiles, widths and stream-K.
// Predicted (H100): 1024 x 512 x 3584, 28 k tiles on 128 tiles of 64 x 64, about 17's BF16 time less half its k tiles'
// count: 7-8 us, near cuBLASLt FP8's 6.8; 128 x 4096 x 4096 from 07's 13.4 us to about 17's 15 us less its half:
// 8-9 us; the cubes and 4096 tokens about 16's (walk D) rate, below 02-03's 128 x 256 tiles.
// N % 8 == 0, K % 16 == 0, any M.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// The grid (kernels/sources.py) and dynamic shared memory: walk D 17's (BN sizes only the grid; TMA_B64's boxes are 64).
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
f_half_tiles_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
                 const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* W, const float* __restrict__ scale_a,
                 const float* __restrict__ scale_b, int M, int N, int K, int ROWS, int WIDTH, int DP, int SK) {
    const operands::Fp8 ops{scale_a, scale_b};
    host_plan::run_rows(ops, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK);
}
