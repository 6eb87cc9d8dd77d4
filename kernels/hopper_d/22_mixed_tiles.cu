// 22 mixed_tiles: 21, or 20's 256 x 192 tiles over C's first columns beside 19's 128 x 256 tiles over the rest, all
// whole, in one launch, where the host's plan finds that mix cheaper.
// At the capped cubes a launch's time is its energy over the 700 W cap, and 20's tall tiles take in 22 % fewer bytes a
// MAC than 128 x 256 ones: in whole waves 103.2 / 103.4 % of cuBLAS against 19's 99.6 / 100.3 (h200-tall1). 20 takes
// them only where their waves fill the blocks: at 4096^3 256 x 192 tiles are 16 x 22 = 352 (2.67 waves, the last
// column two thirds empty), stream-K there would cut ranges of 21 k tiles (too short for a 256 x 192 fix-up, 20's
// MIN_SPLIT_KT), so 19-21 run 512 tiles of 128 x 256: 3.88 waves, 64 k tiles each.
// What changed: where the plan (host_plan.py, mixed_launch_plan) says SPANS > 0, the first SPANS x 768 columns go in
// 256 x 192 tiles and the rest in 128 x 256 tiles, both whole, walked round-robin, the tall ones first
// (mixed_tiles.cuh); 768 is where both widths' columns meet. At 4096^3: 256 tall tiles over 3072 columns and 128 wide
// ones, each block two of one and one of the other (2.67 waves of tall tiles' time, as 19's 4 waves), 75 % of the MACs
// in tall tiles, no fix-up. The two kinds share 20's ring of 3 x 56 KB. Elsewhere (SPANS 0) 21's code.
// Predicted: at 4096^3 about 2 points of cuBLAS more than 21 (three quarters of 20's 3 in whole waves); elsewhere 21's.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"
#include "mixed_tiles.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 19's grid, boxes and dynamic shared memory (the tall ring of 3 x 56 KB and its staging fit in it).
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_mixed_tiles(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
              const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
              int WIDTH, int DP, int SK, int GROUP, int SPANS) {
    if (SPANS) mixed_tiles::run(operands::Bit16<T>{}, tma_a128, tma_b, tma_c, M, N, K, SPANS, GROUP);
    else host_plan::run_rows<true, true, true>(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK, GROUP);
}
