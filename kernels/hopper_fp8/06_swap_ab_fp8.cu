// 06 swap_ab_fp8: walk D's 10 step in FP8, for decode and short prefill (M <= 64 tokens): compute C^T = B^T A^T, so
// the tokens become wgmma's N. 03-05 spend a 64-row instruction and a 128-row box of A on 1 to 64 tokens: at M = 1,
// 127 of every 128 rows the tensor core multiplies are zeros, and each k tile moves 16 KB of A (all zeros but one
// row) beside 32 KB of B; with 128 x 256 tiles a decode shape also has few tiles (16 at N = 4096: 03 ran the M = 128
// shapes at 31-90 % of cuBLASLt FP8). Swapped, the weights fill wgmma's 64 rows: a tile is BNT = 128 features (two
// consumer warpgroups) or 64 (one; the other has none) by TN tokens, TN = 16 up to M = 16 (m64n16k32), else 64
// (m64n64k32). FP8 wgmma takes both operands K-major, which B (N x K) and A (M x K) already are, so the swap needs
// no transpose and the same descriptors as 03's: B's 64-row boxes are wgmma's A, A's 16-row boxes its B
// (wgmma_fp8_k_tile<TN> with the operands exchanged). A is loaded in boxes of 16 tokens (BM below, which
// farm/measure/tma.py makes A's box), only those below M, so a stage is 2 KB of A beside 16 KB of B at TN = 16
// (walk D's 10 went from 50 % to 75 % of cuBLAS at 1 x 4096 x 4096 when its A box shrank from 128 rows to 16): the
// ring is 12 stages deep at TN = 16, 9 at 64, more of B in flight a block, which is what a decode step, bound by
// reading B from DRAM, is short of. The accumulators hold C^T (lane l of warp w: features 16w + l/4 (+8), tokens
// 2(l%4) (+1) (+8j)), so the epilogue writes C[token][feature] element by element, 8 consecutive features a token
// (whole 32-byte sectors). A decode shape has N / BNT tiles (32 at N = 4096), so K is split (1 to 8 slices, any
// count) with 05's fix-up (partials in a workspace plane a slice, per-warp arrival counters, the last warp sums in
// slice order); the plan is walk D's 10's estimate, waves x (k tiles a unit + fix-up) x (BNT + TN + 32), with the
// fix-up's FP32 partials weighed against FP8 k tiles, its minimum taken in one warp reduction.
// Above M = 64 it runs 05's split-K pipeline (kernels/common/split_k_fp8.cuh: 128 x 256 tiles, whole K while they
// fill the grid), the tile's A and B read in the small boxes this launch's tensor maps have: 8 boxes of A and 4 of B
// a k tile instead of 05's 2 (the class builds one box size per operand and launch).
// N % 8 == 0, K % 16 == 0, any M. The swapped pipeline is kernels/common/swapped.cuh (shared with 07 and walk D's 13);
// the plan and the fix-up below are this stage's.
#include "split_k_fp8.cuh"
#include "swapped.cuh"

// The launch (kernels/sources.py): BM and BN are the rows of A's and B's TMA boxes (farm/measure/tma.py), 16 tokens
// and 64 features; with the launch's splits they size the persistent grid for the most units the swap makes.
namespace f06 {
enum : int {
    BM = 16,
    BN = 64,
    SMEM_BYTES = swapped::RING_BYTES,  // 12 x 18 KB (TN = 16), 9 x 24 KB (TN = 64), 4 x 48 KB (05's)
    SWAP_MAX_M = 64,                       // tokens up to which the product is swapped
};
}  // namespace f06

__device__ unsigned int f06_arrivals[split_k_fp8::ARRIVALS];  // one per (tile, consumer warp), zero between launches

namespace swap_ab_fp8 {
using persistent_fp8::BK;
using swapped::cdiv, swapped::Plan;

// The estimated k-tile times in tiles of TN tokens (one tile: M <= TN) x `bnt` features, each tile's K in `s` slices,
// on `ctas` blocks, or -1 where that plan may not run. The fix-up in k-tile times: the last slice writes its partial
// and reads all s back ((1 + s) x min(M, tn) x bnt FP32 values) against a k tile's (tn + bnt) x BK bytes of FP8; plus
// one for the fences and the count.
__device__ __forceinline__ long long plan_cost(int M, int N, int K, int ctas, int max_splits, int tn, int bnt, int s) {
    const int tiles = cdiv(N, bnt), KT = cdiv(K, BK);
    if (s > max_splits || s > KT || (s > 1 && (tiles >= ctas || tiles > split_k_fp8::ARRIVALS / persistent_fp8::WARPS))) return -1;
    const int fixup = s > 1 ? 1 + cdiv((1 + s) * min(M, tn) * bnt * 4, (tn + bnt) * BK) : 0;
    return (long long)cdiv(tiles * s, ctas) * (cdiv(KT, s) + fixup) * (bnt + tn + 32);
}

// The cheapest plan, by one warp: lane l (0-15) costs 128 >> (l / 8) features a tile with l % 8 + 1 slices; one
// reduction takes the lowest (cost, lane): ties to the lower lane (the wider tile, then fewer slices). Costs are capped
// at 2^26 - 1 (decode shapes cost under 2^18) so that cost and lane fit one 32-bit key; lane 0's (128, 1) always runs.
__device__ __forceinline__ Plan plan_for(int M, int N, int K, int ctas, int max_splits, int tn) {
    const unsigned lane = threadIdx.x % 32, cap = (1u << 26) - 1;
    const long long mine = lane < 16 ? plan_cost(M, N, K, ctas, max_splits, tn, 128 >> (lane / 8), lane % 8 + 1) : -1;
    const unsigned key = (mine < 0 ? cap : (unsigned)min(mine, (long long)cap)) << 5 | lane;
    const int best = __reduce_min_sync(0xffffffffu, key) & 31;
    return Plan{128 >> (best / 8), best % 8 + 1};
}

// 05's fix-up on C^T: store this slice's partial to plane z of W, count the warp's arrival; the last of the `splits`
// sums every plane in z order into acc (each plane's loads a lane issued together) and returns true: it stores C.
template <int TN>
__device__ __forceinline__ bool last_split_sums(float (&acc)[TN / 2], float* W, unsigned int* arrival, int splits, int z, int M, int N,
                                                int n0) {
    const size_t plane = (size_t)M * N;
    for_each_swapped<TN>(M, N, 0, n0, [&](int i, size_t at) { W[z * plane + at] = acc[i]; });
    if (!split_k_fp8::last_arrival(arrival, splits)) return false;
#pragma unroll
    for (int i = 0; i < TN / 2; ++i) acc[i] = 0.0f;
#pragma unroll 1
    for (int p = 0; p < splits; ++p) for_each_swapped<TN>(M, N, 0, n0, [&](int i, size_t at) { acc[i] += __ldcg(W + p * plane + at); });
    return true;
}

// The swapped pipeline with this stage's plan (made by warp 0) and fix-up.
template <int TN>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, float* W, const float* scale_a,
                                    const float* scale_b, int M, int N, int K, int max_splits) {
    swapped::run<TN>(
        swapped::Fp8{scale_a, scale_b}, tma_a, tma_b, C, M, N, K, [&] { return plan_for(M, N, K, gridDim.x, max_splits, TN); },
        [&](float(&acc)[TN / 2], int splits, int t, int z, int c, int n0) {
            return last_split_sums<TN>(acc, W, &f06_arrivals[t * persistent_fp8::WARPS + c * 4 + threadIdx.x % 128 / 32], splits, z, M, N, n0);
        });
}
}  // namespace swap_ab_fp8

__global__ void __launch_bounds__(persistent_fp8::THREADS, 1)
f_swap_ab_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* W,
              const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K, int max_splits) {
    if (M <= 16) swap_ab_fp8::run<16>(tma_a, tma_b, C, W, scale_a, scale_b, M, N, K, max_splits);
    else if (M <= f06::SWAP_MAX_M) swap_ab_fp8::run<64>(tma_a, tma_b, C, W, scale_a, scale_b, M, N, K, max_splits);
    else split_k_fp8::run<f06::BM, f06::BN>(tma_a, tma_b, C, W, f06_arrivals, scale_a, scale_b, M, N, K, max_splits);
}
