// 21 k_turns: 20 with each block's k tiles walked first to last, then last to first, in turns, and C's stores the
// first lines L2 gives up.
// The floor probe (README.md) priced DRAM reads at about 4 points of cuBLAS's time a GB at 8192^3. 20 reads 1.14 GB
// there, 4.2 times A and B: a wave of 132 tiles of 256 x 192 (16 tile rows by 8.25 columns, grouped_tile) reads
// 64 MB of A and 27 of B, k tile by k tile in step, and the next wave, the same 16 tile rows, starts again at k tile 0,
// long gone from the 50 MB L2. Turned, the next wave starts on the k tiles the last one ended on, what L2 still holds
// of the A they share. The wave's C (26 MB of FP32) leaves at that moment: stored with an evict-first policy it gives
// way before them.
// What changed: stream_k's producer (TURN) walks a block's odd units' k tiles last to first; the consumers take the
// stages in the order they come (a tile's sum in another order); the TMA stores of C carry an L2::evict_first cache
// policy (tma_store::store_2d). The plan is 20's (host_plan.py, tall_plan).
// Predicted (H100, H200): at 8192^3 DRAM reads down by up to a quarter (1.14 -> about 0.85 GB), about a point more of
// cuBLAS; at 4096^3 (A and B 64 MB) less.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };  // 20's

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_k_turns(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
          const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
          int WIDTH, int DP, int SK) {
    host_plan::run_rows<true, true, true>(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK);
}
