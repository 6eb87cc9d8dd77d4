// 16 priced_plan: 15 on a plan that prices a stream-K k tile at twice a whole tile's, as measured; stream-K is then
// chosen only for a short last wave.
// Issue 31's LLM shapes above 128 tokens: 12's plan (09's model, kernels/hopper_d/host_plan.py) takes stream-K at 21 of
// the 36, and there 12 ran below 07's whole tiles at 19 (H100, run h100-llmb, in blocks at the cap): 1024 x 3584 x
// 18944 38.9 % of cuBLAS against 97.7 %, 1024 x 8192 x 28672 55.9 against 99.6, 4096 x 4096 x 14336 75.8 against 98.0.
// The plan forced on 12 (H100 GPU-f1325015, batch by batch, one repeat; README.md): each stream-K plan took 1.8 to 3.1
// times as long a k tile (its blocks' k tiles, the fix-up included) as whole tiles of the same width: 1024 x 1024 x
// 4096, 64 columns, 36.3 us shared against 18.3 us whole; 1024 x 1024 x 8192 64.9 against 37.0; 4096 x 512 x 3584, 128
// columns, 50.1 against 27.9; 1024 x 512 x 3584, 64 columns, 22.0 against 14.7. 09's model prices the fix-up at a few
// k tiles, and its k tiles as whole ones'. Why (Nsight Compute, README.md, 16's section): stream-K's blocks lose
// L2's sharing of A and B (DRAM reads 8x at 1024 x 3584 x 18944); at small shapes its k tiles run about 3x slower.
// What changed: the plan alone (host_plan.plan with STREAM_K_PRICE = 2); the kernel is 15's body, a programmatic
// dependent launch of 12 (host_plan.cuh with DEPENDENT).
// Predicted (H100): the 19 shapes at 07's whole-tile numbers or above (12's pipeline: a deeper ring for narrow tiles,
// TMA stores), 1024 x 1024 x 8192 from 12's 57 % to 79 % (64-column whole tiles, forced), 8192^3 a little under 12
// (16 waves of 128 x 256 tiles where 12 shares the last 68 tiles' k tiles).
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 12's persistent grid and shared memory (kernels/sources.py reads BM and BN here before the header's ring's).
enum : int { BM = 128, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_priced_plan(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, const __grid_constant__ TensorMap tma_c,
              float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int WIDTH, int DP, int SK) {
    host_plan::run<true, true>(operands::Bit16<T>{}, tma_a, tma_b, &tma_c, C, W, M, N, K, WIDTH, DP, SK);
}
