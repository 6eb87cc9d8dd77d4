// 18 swap_dependent: 13 launched as a programmatic dependent launch (15's launch on 13's swapped decode path).
// The decode shapes trail cuBLAS by about 1 us a launch whatever their size (H100, run d18, 2026-11-27, one repeat,
// 13's time against cuBLASLt's): 1 x 3584 x 3584 9.24 / 8.08 us, 1 x 4096 x 4096 9.85 / 9.05, 1 x 18944 x 3584
// 52.97 / 52.07; 15 found about 0.5 us of a launch outside the k loop (README.md, 15). Walk F's 10 does the same to 07.
// What changed: the launch (Launch.dependent); after the setup every thread runs griddepcontrol.launch_dependents,
// then griddepcontrol.wait, so nothing touches A, B, C, the workspace or the arrival counters before the previous
// kernel has completed. Up to 128 tokens 13's swapped body (swapped.cuh with DEPENDENT), above them 15's (host_plan.cuh);
// plan 13's (swap_plan.py); 13's and 15's CUBINs unchanged.
// Predicted (H100): the three shapes above up to 0.5 us a launch faster (93-96 % of cuBLAS); above 128 tokens 15's times.
// Measured (H100, run d19, three repeats, us 18 / 13 / cuBLAS): 8.42 / 9.10 / 7.81, 10.74 / 10.01 / 8.84 (slower),
// 51.98 / 52.44 / 51.92; over the 24 decode shapes 107.2 % of cuBLAS against 13's 104.0 (README.md, 18).
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"
#include "swapped.cuh"

// 13's launch: BM 16 is TMA_A's box rows (16 tokens), TMA_A128 A in 12's boxes; 12's dynamic shared memory.
enum : int { BM = 16, BN = 8, SMEM_BYTES = persistent_ws::SMEM_BYTES + tma_store::BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_swap_dependent(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
                 const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int TN,
                 int BNT, int SLICES, int WIDTH, int DP, int SK) {
    const swapped::Bit16<T> ops{};
    if (!swapped::run_swapped<true>(ops, tma_a, tma_b, C, W, stream_k::arrivals, M, N, K, TN, BNT, SLICES))
        host_plan::run<true, true>(ops, tma_a128, tma_b, &tma_c, C, W, M, N, K, WIDTH, DP, SK);
}
