// 19 lean_k_loop: 17 with a consumer k loop that carries its state instead of deriving it every k tile.
// At the cubes in blocks at the 700 W cap a launch's time is its energy over the cap, and 17's energy a launch is
// cuBLAS's within 1-3 % (README.md, 18's try), while it issues far more: ncu at 4096^3 BF16, issue slots 18.7 % to
// cuBLAS's 11.9 (H100, run d18q). The SASS of 12's 256-column k loop (the cubes' path; nvdisasm of its CUBIN) is 87
// instructions a warp a k tile for 4 HGMMAs: the stage as it % STAGES and its parity as it / STAGES (signed), each
// barrier's shared address again from the CTA id (S2UR SR_CgaCtaId), and all 8 wgmma descriptors rebuilt from the
// stage's address (mask, shift, or, R2UR), 8 consumer warps doing it for every 128 x 256 x 64 k tile.
// What changed: stream_k.cuh's consumer with LEAN: the stage and its parity step with the loop (a wrap, no division),
// the barriers' shared addresses and stage 0's descriptors are made once a unit (a stage's are stage 0's plus its
// offset >> 4, a k16 step +2 for A, +128 for B: wgmma_k_tile_desc), from the warpgroup index read through a shuffle
// so the compiler knows it is warp-uniform and keeps all of it in uniform registers (no R2UR before each HGMMA):
// 45 instructions a k tile. The producer, plan, epilogue and launch are 17's; 17's CUBIN is unchanged.
// Predicted (H100): issue slots near cuBLAS's; at the cubes in blocks less energy a launch, so 1-3 % less time.
// Measured (runs h100-d19l, h200-d19l, 2026-11-27): issue slots 18.7 -> 9.8 % (cuBLAS 11.9) at 4096^3, the tensor
// pipe unchanged; 0.5-1.4 points more of cuBLAS (8192^3: 100.8 / 100.5 % on the H100, 100.3 / 99.8 % on the H200):
// at the cap that is the energy a launch (mean power x time), so half the instructions saved about 1 % of it. Not
// capped, 1024^3: 17 94.9 %, 19 109.9 % (run small19, H200). LLM shapes: no slower (README.md). Kept.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 17's grid, boxes and dynamic shared memory.
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_lean_k_loop(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
              const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
              int WIDTH, int DP, int SK) {
    host_plan::run_rows<true>(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK);
}
