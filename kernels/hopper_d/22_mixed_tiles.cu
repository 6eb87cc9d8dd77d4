// 22 mixed_tiles: 21, or 20's 256 x 192 tiles over C's first columns beside 19's 128 x 256 tiles over the rest, all
// whole, in one launch, where the host's plan finds that mix cheaper.
// At the capped cubes a launch's time is its energy over the 700 W cap, and 20's tall tiles take in 22 % fewer bytes a
// MAC than 128 x 256 ones: in whole waves 103.2 / 103.4 % of cuBLAS against 19's 99.6 / 100.3 (h200-tall1). 20 takes
// them only where their waves fill the blocks: at 4096^3 they are 16 x 22 = 352 (2.67 waves, the last column two
// thirds empty), and stream-K there would cut ranges of 21 k tiles, too short for their fix-up (MIN_SPLIT_KT); so
// 19-21 run 512 tiles of 128 x 256, 3.88 waves.
// What changed: where the plan (host_plan.py, mixed_launch_plan) says SPANS > 0, the first SPANS x 768 columns go in
// tall tiles and the rest in 128 x 256 ones, both whole, walked round-robin, the tall ones first. At 4096^3: 256 tall
// tiles over 3072 columns, 128 wide ones over 1024, each block two of one and one of the other (19's 4 waves' time),
// 75 % of the MACs in tall tiles, no fix-up. Elsewhere (SPANS 0) 21's code.
// Predicted: at 4096^3 about 2 points of cuBLAS more than 21 (three quarters of 20's 3 in whole waves).
// Measured (H200s, 5bab112, README.md): 4096^3 by do_bench, 21 -> 22, BF16 99.5 -> 101.8 and 99.4 -> 101.4 %, FP16
// 100.2 -> 101.6 and 99.7 -> 101.7 (three cards); in blocks (h200-cubesf) 99.7 / 99.3 -> 101.8 / 101.6; DRAM 131 -> 124
// MB (ncu). The 15 LLM shapes its plan mixes (h200-llmd): 97.8-102.1 -> 99.7-107.6. Kept: 1.0x at 4096^3 reached.
// N % 8 == 0, K % 8 == 0, any M.
#include "mixed_tiles.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 19's grid, boxes and dynamic shared memory (the tall ring of 3 x 56 KB and its staging fit in it).
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_mixed_tiles(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
              const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
              int WIDTH, int DP, int SK, int GROUP, int SPANS) {
    using mixed_tiles::Mix, mixed_tiles::WIDE_ROWS, mixed_tiles::WIDE_WIDTH;
    if (SPANS) mixed_tiles::run<Mix, WIDE_ROWS, WIDE_WIDTH>(operands::Bit16<T>{}, tma_a128, tma_b, tma_c, M, N, K, SPANS, GROUP);
    else host_plan::run_rows<true, true, true>(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK, GROUP);
}
