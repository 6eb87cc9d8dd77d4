// 17 half_tiles: 16 with whole tiles of 64 rows as a choice of the host's plan, where 128-row tiles leave SMs idle.
// Issue 31's weakest cells above 128 tokens are the k/v projections: 1024 x 512 x 3584 ran at 65-72 % of cuBLAS on an
// H100 (16: 13.9 us, cuBLAS 9.8-11.5 us). There 16 walks 64 tiles of 128 x 64 on 64 of 132 SMs, 56 k tiles each at
// about 0.22 us, 24 KB a k tile into each SM: about what one SM takes in from L2 (some 64 bytes a clock); stream-K
// on all 132 ran its k tiles 3x slower (README.md, 16). cuBLAS's kernel there (Nsight Compute) runs 128 tiles of
// 64 x 64: a k tile is 16 KB into each SM, on twice the SMs.
// What changed: the plan (kernels/hopper_d/host_plan.py) also costs whole 64-row tiles of 256, 128 or 64 columns,
// a k tile at half a 128-row tile's width term (half its math) plus the same fixed 32, and takes them where they are
// cheaper than 16's plan (ties: 16's); ROWS (64 or 128) arrives with 16's WIDTH, DP, SK. The 64-row path is 16's
// pipeline (host_plan.cuh, stream_k.cuh at ROWS 64) over 64-row boxes of A (TMA_A; BM below), the two consumer
// warpgroups splitting the columns; the 128-row path is 16's, over TMA_A128 (A in 128-row boxes, as 13's).
// Predicted (H100): 1024 x 512 x 3584 from 16's 13.9 us to about 9-10 us (56 k tiles of 16 KB at 16's per-SM rate),
// near cuBLAS; the other LLM shapes above 128 tokens and the cubes unchanged (16's plan); decode and 128-token
// shapes faster than 16 (half the rows of zeros or idle SMs), though below 13's and 14's swapped plans.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// The persistent grid (kernels/sources.py): one block per SM wherever ceil(N / 8) x ceil(M / 64) allows; BM is also
// TMA_A's box rows. Dynamic shared memory: 12's (its ring and staging buffers), which holds the 64-row ring too.
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_half_tiles(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
             const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
             int WIDTH, int DP, int SK) {
    host_plan::run_rows(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK);
}
