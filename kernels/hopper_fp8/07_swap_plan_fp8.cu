// 07 swap_plan_fp8: 06 swapped up to M = 128 tokens, its plan made on the host, its fix-up in the accumulators' order.
// Measured on an H100 (issue 32, M = 1, 16, 128 of plans/llm_fp8.toml): 06 reached 85-87 % of cuBLASLt FP8 at M = 1 and
// 16 but 64-75 % at the small layers (1 x 4096 x 4096: 74 %, DRAM throughput 30 % in Nsight Compute), and M = 128 ran
// 05's 128 x 256 tiles at 16-53 % (128 x 4096 x 4096: 20 % for 05, 31 % for 03). Three changes:
// - Tokens up to 128 swapped: TN = 128 (m64n128k32) for 65-128 tokens, so a 128-token layer is 128-feature tiles with K
//   in slices like a decode step (128 x 4096 x 4096: 32 tiles x 4 slices on 132 SMs, where 05 had 16 tiles x 8).
// - The fix-up in the accumulators' order: each warp stores its slice's partial as TN / 8 float4 a lane, the warp's
//   512-byte rows side by side (06 wrote C^T's elements one float at a time into an M x N plane), and the last warp to
//   arrive loads every slice's float4s of a chunk before it adds any (06 and 05 waited for each plane in turn: at 1 x
//   4096 x 4096, 4 round trips to L2 after the last k tile; 05 at 128 x 4096 x 4096, 32). Sums stay in slice order.
// - The plan on the host (kernels/hopper_fp8/swap_plan.py, Launch.planner): tokens a tile (TN), features a tile (BNT)
//   and K slices arrive as launch arguments, the workspace is sized from them (none where K is whole), and thread 0
//   prefetches the tensor maps instead of warp 0 costing 16 plans before the first load.
// Above M = 128 it runs 05's pipeline in this launch's small boxes (as 06 above 64), its slices from the same plan.
// N % 8 == 0, K % 16 == 0, any M. The swapped pipeline, its fix-up and its run on a host plan: kernels/common/swapped.cuh
// (shared with 06 and walk D's 13).
#include "split_k_fp8.cuh"
#include "swapped.cuh"

// The launch (kernels/sources.py): 06's boxes (16 tokens of A, 64 features of B) and grid.
namespace f07 {
enum : int {
    BM = 16,
    BN = 64,
    SMEM_BYTES = swapped::RING_BYTES,
};
}  // namespace f07

__device__ unsigned int f07_arrivals[split_k_fp8::ARRIVALS];  // one per (tile, consumer warp), zero between launches

// tn: tokens a tile (16, 64 or 128; 0 above 128 tokens: 05's path), bnt: features a tile (128 or 64), slices: K slices
// (05's path: its slices at most), all from kernels/hopper_fp8/swap_plan.py.
__global__ void __launch_bounds__(persistent_fp8::THREADS, 1)
f_swap_plan_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* W,
                const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K, int tn, int bnt, int slices) {
    const swapped::Fp8 ops{scale_a, scale_b};
    if (!swapped::run_swapped(ops, tma_a, tma_b, C, W, f07_arrivals, M, N, K, tn, bnt, slices))
        split_k_fp8::run<f07::BM, f07::BN>(tma_a, tma_b, C, W, f07_arrivals, scale_a, scale_b, M, N, K, slices);
}
