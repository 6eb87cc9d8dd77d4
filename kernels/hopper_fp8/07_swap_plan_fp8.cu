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
// N % 8 == 0, K % 16 == 0, any M.
#include "split_k_fp8.cuh"
#include "swap_ab_fp8.cuh"

// The launch (kernels/sources.py): 06's boxes (16 tokens of A, 64 features of B) and grid.
namespace f07 {
enum : int {
    BM = 16,
    BN = 64,
    SMEM_BYTES = swap_ab_fp8::RING_BYTES,
    MAX_SLICES = 8,  // the host plan's K slices at most (kernels/hopper_fp8/swap_plan.py)
};
}  // namespace f07

__device__ unsigned int f07_arrivals[split_k_fp8::ARRIVALS];  // one per (tile, consumer warp), zero between launches

namespace swap_plan_fp8 {
using namespace swap_ab_fp8;

// One consumer warp's fix-up. Slice z's partial goes to W as the warp holds it: float4 q of lane l at
// ((z * tiles + t) * WARPS + w) * TN / 8 * 32 + q * 32 + l (w: the tile's consumer warp, 0-7), 512 bytes a warp
// instruction; the arrival is counted (split_k_fp8::last_arrival). The last of `splits` loads all slices' float4s of up
// to 4 q at once, adds them in slice order into acc and returns true: it stores C.
template <int TN>
__device__ __forceinline__ bool fragment_fixup(float (&acc)[TN / 2], float* W, unsigned int* arrival, int splits, int tiles, int t, int z,
                                               int w) {
    enum : int { Q = TN / 8, CHUNK = Q < 4 ? Q : 4 };
    const size_t plane = (size_t)tiles * persistent_fp8::WARPS * Q * 32;  // float4s a slice
    float4* mine = reinterpret_cast<float4*>(W) + ((size_t)t * persistent_fp8::WARPS + w) * Q * 32 + threadIdx.x % 32;
#pragma unroll
    for (int q = 0; q < Q; ++q) __stcg(mine + z * plane + q * 32, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
    if (!split_k_fp8::last_arrival(arrival, splits)) return false;
#pragma unroll
    for (int q0 = 0; q0 < Q; q0 += CHUNK) {
        float4 part[f07::MAX_SLICES][CHUNK];
#pragma unroll
        for (int p = 0; p < f07::MAX_SLICES; ++p)
#pragma unroll
            for (int j = 0; j < CHUNK; ++j)
                if (p < splits) part[p][j] = __ldcg(mine + p * plane + (q0 + j) * 32);  // through L2: other SMs wrote them
#pragma unroll
        for (int j = 0; j < CHUNK; ++j) {
            float* sum = &acc[4 * (q0 + j)];
            sum[0] = sum[1] = sum[2] = sum[3] = 0.0f;
#pragma unroll
            for (int p = 0; p < f07::MAX_SLICES; ++p)
                if (p < splits) {
                    sum[0] += part[p][j].x;
                    sum[1] += part[p][j].y;
                    sum[2] += part[p][j].z;
                    sum[3] += part[p][j].w;
                }
        }
    }
    return true;
}

// The swapped pipeline on the host's plan: BNT features a tile, K in `slices`.
template <int TN>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, float* W, const float* scale_a,
                                    const float* scale_b, int M, int N, int K, int bnt, int slices) {
    swap_ab_fp8::run<TN>(
        tma_a, tma_b, C, scale_a, scale_b, M, N, K,
        [&] {
            if (threadIdx.x == 0) {
                prefetch_tensormap(tma_a);
                prefetch_tensormap(tma_b);
            }
            return Plan{bnt, slices};
        },
        [&](float(&acc)[TN / 2], int splits, int t, int z, int c, int n0) {
            const int w = c * 4 + threadIdx.x % 128 / 32;
            return fragment_fixup<TN>(acc, W, &f07_arrivals[t * persistent_fp8::WARPS + w], splits, cdiv(N, bnt), t, z, w);
        });
}
}  // namespace swap_plan_fp8

// tn: tokens a tile (16, 64 or 128; 0 above 128 tokens: 05's path), bnt: features a tile (128 or 64), slices: K slices
// (05's path: its slices at most), all from kernels/hopper_fp8/swap_plan.py.
__global__ void __launch_bounds__(persistent_fp8::THREADS, 1)
f_swap_plan_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* W,
                const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K, int tn, int bnt, int slices) {
    if (tn == 16) swap_plan_fp8::run<16>(tma_a, tma_b, C, W, scale_a, scale_b, M, N, K, bnt, slices);
    else if (tn == 64) swap_plan_fp8::run<64>(tma_a, tma_b, C, W, scale_a, scale_b, M, N, K, bnt, slices);
    else if (tn == 128) swap_plan_fp8::run<128>(tma_a, tma_b, C, W, scale_a, scale_b, M, N, K, bnt, slices);
    else split_k_fp8::run<f07::BM, f07::BN>(tma_a, tma_b, C, W, f07_arrivals, scale_a, scale_b, M, N, K, slices);
}
