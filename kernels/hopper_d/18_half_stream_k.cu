// 18 half_stream_k: 17 with its 64-row tiles shared by stream-K too, where whole 64-row tiles leave SMs idle.
// 17's weakest LLM cells at 128 tokens are the projections with few columns: on an H100 in blocks (h100-llmb and the
// h100-llm17 run, README.md 17) 128 x 1024 x 4096 and 8192 at 66-75 % of cuBLAS, 128 x 512 x 3584 at 66 %. There 17
// walks 32 (16) tiles of 64 x 64 whole on 32 (16) of 132 SMs, 64-128 k tiles each; 16's stream-K shares 128-row tiles
// only, whose k tiles take twice a 64-row one's time.
// What changed: the kernel lets stream-K share 64-row tiles (host_plan.cuh, stream_k.cuh with SHARED): each consumer
// warpgroup's 64 x COLS part of a shared tile goes through 09's fix-up (its planes, its per-warp arrivals), a tile
// finished by the fix-up stored from registers, whole tiles by TMA stores as in 17. The plan (host_plan.py,
// half_launch_plan with `shared`) also costs 64-row stream-K candidates, priced as 16's are (a shared k tile at twice
// a whole one's), up to 16 segments a tile; the cheapest of those and 17's wins, ties to 17's.
// Predicted (H100): 128 x 1024 x 8192 from 17's 128 k tiles a block to 16 (8 x 2 shared) and a fix-up of 16 planes:
// about cuBLAS's 11 us; 128 x 1024 x 4096 and 128 x 512 x 3584 likewise; at 16 tokens and fewer 64-row stream-K
// near 13's swapped plan, not above it; elsewhere 17's plan and times.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 17's grid (kernels/sources.py: BM 64 is also TMA_A's box rows) and dynamic shared memory.
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_half_stream_k(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
                const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
                int WIDTH, int DP, int SK) {
    host_plan::run_rows<true>(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK);
}
