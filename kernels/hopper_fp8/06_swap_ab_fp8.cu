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
// N % 8 == 0, K % 16 == 0, any M.
#include "split_k_fp8.cuh"

// The launch (kernels/sources.py): BM and BN are the rows of A's and B's TMA boxes (farm/measure/tma.py), 16 tokens
// and 64 features; with the launch's splits they size the persistent grid for the most units the swap makes.
namespace f06 {
enum : int {
    BM = 16,
    BN = 64,
    A_BOX = 16 * 128,  // one 16 x 128 box of A (tokens x K bytes)
    B_BOX = 64 * 128,  // one 64 x 128 box of B (features x K bytes)
    MAX_STAGES = 12,
    SMEM_BYTES = 12 * (16 * 128 + 2 * 64 * 128),  // dynamic: 12 x 18 KB (TN = 16), 9 x 24 KB (TN = 64), 4 x 48 KB (05's)
    SWAP_MAX_M = 64,                              // tokens up to which the product is swapped
};
}  // namespace f06

__device__ unsigned int f06_arrivals[split_k_fp8::ARRIVALS];  // one per (tile, consumer warp), zero between launches

namespace swap_ab_fp8 {
using persistent_fp8::BK;
using persistent_fp8::cdiv;

// The ring for TN tokens a tile: a stage holds TN / 16 boxes of A, then two of B (1 KB aligned), as many as fit.
template <int TN>
struct Ring {
    enum : int { A_BYTES = TN / 16 * f06::A_BOX, STAGE_BYTES = A_BYTES + 2 * f06::B_BOX, STAGES = f06::SMEM_BYTES / STAGE_BYTES };
};

struct Plan {
    int bnt, splits;
};

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

// The producer thread: every unit's k tiles, the A boxes holding tokens below M and the tile's BNT / 64 boxes of B.
template <int TN, int BNT>
__device__ __forceinline__ void produce(const TensorMap& tma_a, const TensorMap& tma_b, const Plan& plan, int M, int N, int KT,
                                        unsigned char* smem, uint64_t* full, uint64_t* empty) {
    using R = Ring<TN>;
    const int a_boxes = min(TN / 16, cdiv(M, 16)), units = cdiv(N, BNT) * plan.splits;  // rows of A past M: never read
    int it = 0;
#pragma unroll 1
    for (int u = blockIdx.x; u < units; u += gridDim.x) {
        const int t = u / plan.splits, z = u % plan.splits, k0 = z * KT / plan.splits, k1 = (z + 1) * KT / plan.splits;
#pragma unroll 1
        for (int kt = k0; kt < k1; ++kt, ++it) {
            const int s = it % R::STAGES;
            if (it >= R::STAGES) mbar_wait(&empty[s], (it / R::STAGES - 1) & 1);
            unsigned char* st = smem + s * R::STAGE_BYTES;
            mbar_arrive_expect_tx(&full[s], a_boxes * f06::A_BOX + BNT / 64 * f06::B_BOX);
#pragma unroll 1
            for (int q = 0; q < a_boxes; ++q) tma_load_2d(st + q * f06::A_BOX, &tma_a, &full[s], kt * BK, q * 16);
#pragma unroll
            for (int p = 0; p < BNT / 64; ++p) tma_load_2d(st + R::A_BYTES + p * f06::B_BOX, &tma_b, &full[s], kt * BK, t * BNT + p * 64);
        }
    }
}

// Visits a warp's share of C^T the way the accumulators hold it: f(d index, offset in C) for tokens [0, TN) below M
// and features n0 + [0, 64) below N.
template <int TN, typename F>
__device__ __forceinline__ void for_each_element(int M, int N, int n0, F f) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int j = 0; j < TN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int r = j * 8 + 2 * (lane % 4) + e, c = n0 + warp * 16 + lane / 4 + 8 * h;
                if (r < M && c < N) f(4 * j + 2 * h + e, (size_t)r * N + c);
            }
}

// 05's fix-up on C^T: store this slice's partial to plane z of W, count the warp's arrival; the last of the `splits`
// sums every plane in z order into acc (each plane's loads a lane issued together) and returns true: it stores C.
template <int TN>
__device__ __forceinline__ bool last_split_sums(float (&acc)[TN / 2], float* W, unsigned int* arrival, int splits, int z, int M, int N,
                                                int n0) {
    const size_t plane = (size_t)M * N;
    for_each_element<TN>(M, N, n0, [&](int i, size_t at) { W[z * plane + at] = acc[i]; });
    if (!split_k_fp8::last_arrival(arrival, splits)) return false;
#pragma unroll
    for (int i = 0; i < TN / 2; ++i) acc[i] = 0.0f;
#pragma unroll 1
    for (int p = 0; p < splits; ++p) for_each_element<TN>(M, N, n0, [&](int i, size_t at) { acc[i] += __ldcg(W + p * plane + at); });
    return true;
}

// Consumer warpgroup c (0 or 1): features [64c, 64c + 64) of every unit's tile, one wgmma group a k tile kept in
// flight (03's), then C (split: the fix-up first). With BNT = 64 warpgroup 1 has no features and returns.
template <int TN, int BNT>
__device__ __forceinline__ void consume(const Plan& plan, const unsigned char* smem, uint64_t* full, uint64_t* empty, float* __restrict__ C,
                                        float* W, const float* scale_a, const float* scale_b, int M, int N, int KT, int c) {
    using R = Ring<TN>;
    if (c * 64 >= BNT) return;
    const int units = cdiv(N, BNT) * plan.splits;
    int it = 0;
#pragma unroll 1
    for (int u = blockIdx.x; u < units; u += gridDim.x) {
        const int t = u / plan.splits, z = u % plan.splits, k0 = z * KT / plan.splits, k1 = (z + 1) * KT / plan.splits;
        float acc[TN / 2] = {};
#pragma unroll 1
        for (int kt = k0; kt < k1; ++kt, ++it) {
            const int s = it % R::STAGES;
            mbar_wait(&full[s], (it / R::STAGES) & 1);
            const unsigned char* st = smem + s * R::STAGE_BYTES;
            wgmma_fp8_k_tile<TN, BK>(acc, st + R::A_BYTES + c * f06::B_BOX, st);  // this warpgroup's 64 features . TN tokens
            wgmma_wait<1>();  // kt's group stays pending; kt-1's is done: release its stage
            if (kt > k0) persistent_fp8::release<1>(&empty[(it - 1) % R::STAGES]);
        }
        wgmma_wait<0>();
        fence_acc(acc);
        persistent_fp8::release<1>(&empty[(it - 1) % R::STAGES]);
        dequantise(acc, scale_a, scale_b);
        const int n0 = t * BNT + c * 64;
        if (plan.splits > 1 &&
            !last_split_sums<TN>(acc, W, &f06_arrivals[t * persistent_fp8::WARPS + c * 4 + threadIdx.x % 128 / 32], plan.splits, z, M, N, n0))
            continue;
        for_each_element<TN>(M, N, n0, [&](int i, size_t at) { C[at] = acc[i]; });
    }
}

// The block: warp 0 plans (the block reads the plan after the barrier), warpgroup 0's first thread loads, warpgroups
// 1 and 2 multiply and store.
template <int TN>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, float* W, const float* scale_a,
                                    const float* scale_b, int M, int N, int K, int max_splits) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[f06::MAX_STAGES], empty[f06::MAX_STAGES];
    __shared__ Plan planned;
    const int tid = threadIdx.x, wg = tid / 128, KT = cdiv(K, BK);
    if (tid < 32) {
        const Plan p = plan_for(M, N, K, gridDim.x, max_splits, TN);
        if (tid == 0) {
            planned = p;
            ring_init<Ring<TN>::STAGES>(full, empty, 4 * (p.bnt / 64));  // every consumer warp with features
        }
    }
    __syncthreads();
    const Plan plan = planned;

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            if (plan.bnt == 128) produce<TN, 128>(tma_a, tma_b, plan, M, N, KT, smem, full, empty);
            else produce<TN, 64>(tma_a, tma_b, plan, M, N, KT, smem, full, empty);
        }
    } else {
        setmaxnreg_inc<232>();
        if (plan.bnt == 128) consume<TN, 128>(plan, smem, full, empty, C, W, scale_a, scale_b, M, N, KT, wg - 1);
        else consume<TN, 64>(plan, smem, full, empty, C, W, scale_a, scale_b, M, N, KT, wg - 1);
    }
}
}  // namespace swap_ab_fp8

__global__ void __launch_bounds__(persistent_fp8::THREADS, 1)
f_swap_ab_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* W,
              const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K, int max_splits) {
    if (M <= 16) swap_ab_fp8::run<16>(tma_a, tma_b, C, W, scale_a, scale_b, M, N, K, max_splits);
    else if (M <= f06::SWAP_MAX_M) swap_ab_fp8::run<64>(tma_a, tma_b, C, W, scale_a, scale_b, M, N, K, max_splits);
    else split_k_fp8::run<f06::BM, f06::BN>(tma_a, tma_b, C, W, f06_arrivals, scale_a, scale_b, M, N, K, max_splits);
}
