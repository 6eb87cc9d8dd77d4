// 21 tile_order: 20 with its tiles walked in groups of a height chosen per shape, and each block's k tiles walked
// forward and backward in turns, so that DRAM delivers less of A and B.
// At the cubes in blocks at the 700 W cap a launch's time is its energy over the cap, and DRAM reads were 4-6 points of
// it (the floor probe, README.md). 20 reads 1.14 GB at 8192^3 BF16, over four times A and B: its waves of 132 tiles
// walk 16 tile rows of 256 at a time, so each wave reads 16 x 256 rows of A beside 9 x 192 columns of B, all K deep,
// and L2 (50 MB) keeps none of it for the next wave. The product of a wave's rows and columns is fixed; their sum is
// least where they are level: 11 x 256 rows beside 12 x 192 columns, 12 % fewer bytes a wave.
// What changed: the host plan (host_plan.py, ordered_launch_plan) is 20's, plus GROUP: the group height whose waves
// read fewest rows of A and columns of B (wave_reads; 20's 16 on a tie); and the producer walks a block's odd units'
// k tiles last to first (stream_k.cuh's ORDER), so a wave starts on the k tiles the last one ended on. The turns alone
// were tried after 20 (k_turns, README.md): DRAM 1.13 -> 1.04 GB, +0.1-0.3 points, in the spread.
// Predicted (an LRU model of L2 at 25 MB, README.md): 8192^3 DRAM 1.10 -> 0.91 GB, about 0.7 points of cuBLAS at the
// cap; at 4096^3 and below the plan keeps 16, so only the turns.
// Measured (H100 GPU-bdf9157b, 1ec8d42, README.md): 8192^3 BF16 DRAM 1.12 -> 0.98 GB (ncu); in blocks, % of cuBLAS
// BF16 / FP16, 20 -> 21: 102.2 / 102.1 -> 102.4 / 102.6, by do_bench 102.2 / 102.0 -> 102.3 / 102.4; ahead in all six
// readings by 0.1-0.5 points; 4096^3 level. Kept; 1.03x at 8192^3 not reached.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 19's grid, boxes and dynamic shared memory (the tall ring of 3 x 56 KB and its staging fit in it).
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_tile_order(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
             const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
             int WIDTH, int DP, int SK, int GROUP) {
    host_plan::run_rows<true, true, true>(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK, GROUP);
}
