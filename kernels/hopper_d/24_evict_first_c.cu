// 24 evict_first_c: 23 with C stored through an L2 evict-first policy, so that its lines leave L2 before A's and B's.
// At 8192^3 a wave's C is 132 x 192 KB (FP32) written at once; in a 50-60 MB L2 it pushes out the A and B lines the
// next wave starts on (21's turns). Probes of 21 at the cap (H200s, README.md): without C stores 106.4 / 107.1 % of
// cuBLAS against 102.5 / 103.1 (the stores, not their waits: 106.2 with the staging written but nothing stored);
// with the evict-first policy 102.9 / 102.9 against 102.6 / 102.5, DRAM reads 0.962 -> 0.939 GB (ncu).
// What changed: the TMA stores of C carry an L2::evict_first cache policy (tma_store.cuh, store_2d<EVICT>) in
// every path of 23's plan; the fix-up's register stores are as they were.
// Predicted: 23's time less 0.3 points of cuBLAS at 8192^3; level where C is small against A and B.
// Measured (H200 GPU-d23c59ca, 3a5435f, README.md): 8192^3 BF16 farm cell / do_bench 103.3 / 104.0 -> 105.1 / 104.0,
// FP16 104.2 / 103.8 -> 104.0 / 103.8; DRAM 0.943 -> 0.922 GB (ncu). Level with 23 within a reading's spread.
// N % 8 == 0, K % 8 == 0, any M.
#include "mixed_tiles.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 19's grid, boxes and dynamic shared memory (the tall ring of 3 x 56 KB and its staging fit in it).
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_evict_first_c(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
                const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
                int WIDTH, int DP, int SK, int GROUP, int SPANS, int HALVES) {
    mixed_tiles::run_tail_halves<true>(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK, GROUP, SPANS, HALVES);
}
