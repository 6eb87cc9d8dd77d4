// 10 swap_ab: compute C^T = B^T A^T, so the token count becomes wgmma's N. wgmma's M is 64
// rows a warpgroup, so 07 and 08 spend a 64-row instruction (and a 128-row A tile) on 1 to 16
// tokens of a decode step: at M = 1, 63 of every 64 rows the tensor core multiplies are zeros,
// and every k tile moves a 128 x 64 box of A that is all zeros but one row. Swapped, the weight
// matrix B fills wgmma's 64 rows (a block: 64 or 128 output features, BNT) and the tokens are its
// N, any multiple of 8: here TN = 16 tokens a tile for M <= 16, else 64. Operands stay where they
// are: B's 64 x 64 TMA boxes (K rows, N contiguous) are wgmma's A read MN-major (imm-trans-a = 1);
// A comes in boxes of 16 tokens x 64 (K contiguous; TN / 16 of them a k tile), wgmma's B read
// K-major (imm-trans-b = 0). The accumulators hold C^T: lane l of warp w holds features
// 16w + l/4 (+8) and tokens 2(l%4) (+1) (+8j), so the epilogue writes C row-major element by
// element, C[token][feature]: 8 consecutive features a token, each 32-byte sector whole.
// A decode shape has N / BNT tiles (32 at N = 4096), so K is split (1 to 8 slices, any count) with
// 08's fix-up (partials in a workspace plane a slice, per-warp arrival counters, the last warp
// sums in slice order), and the plan is 08's kind of estimate: waves x (k tiles a unit + fix-up)
// x (BNT + TN + 32), BNT 128 (two consumer warpgroups) or 64 (one; the other waits). With A's box
// 16 rows, a stage is 18 KB at TN = 16 (24 KB at 64), so the ring is 12 deep (9): more of B in
// flight a block, which is what a decode shape, bound by reading B from DRAM, is short of.
// A first version kept 08's 128 x 64 boxes of A (and ran 08's code above M = 64): at 1 x 4096 x 4096
// its k tile moved 16 KB of A, all zeros but one row, beside 16 KB of B, the ring was 7 deep, and
// it reached 50 % of cuBLAS where this one reaches 75 % (H100; kernels/hopper_d/README.md).
// Larger M runs as tiles of 64 tokens: correct, but slower than 05-08's 128-row tiles there.
// N % 8 == 0, K % 8 == 0, any M.
#include "persistent_ws.cuh"

// The persistent grid: one block per SM whenever N * ceil(M / 16) >= SMs (kernels/sources.py reads BM and BN
// here); BM is also the rows of A's TMA box.
enum : int {
    BM = 16,
    BN = 1,
    SWAP_PANEL = 64 * 128,         // one 64 x 64 box of B, 128-byte rows
    SWAP_A_BOX = BM * 64 * 2,      // one 16 x 64 box of A
    SWAP_MAX_STAGES = 12,
    SMEM_BYTES = SWAP_MAX_STAGES * (SWAP_A_BOX + 2 * SWAP_PANEL),  // dynamic: 12 x 18 KB (TN = 16) or 9 x 24 KB (64)
};

__device__ unsigned int swap_arrivals[persistent_ws::ARRIVALS];  // zero when the module loads; each tile's last arrival zeroes its own

namespace swap_ab {
using persistent_ws::BK;
using persistent_ws::cdiv;
using persistent_ws::Walk;

// The ring for TN tokens a tile: a stage holds TN / 16 boxes of A, then two panels of B (1 KB aligned), as many as fit.
template <int TN>
struct Ring {
    enum : int { A_BYTES = TN / 16 * SWAP_A_BOX, STAGE_BYTES = A_BYTES + 2 * SWAP_PANEL, STAGES = SMEM_BYTES / STAGE_BYTES };
};

struct Plan {
    int bnt, splits;
};

// The estimated k-tile times in tiles of TN tokens x `bnt` features, each tile's K in `s` slices, on `ctas` blocks, or
// -1 where that plan may not run: 08's plan_cost with the tile's rows being the tokens (TN of them in a k tile's
// loads, min(M, TN) in the partials).
__device__ __forceinline__ long long plan_cost(int M, int N, int K, int ctas, int tn, int bnt, int s) {
    const int tiles = cdiv(M, tn) * cdiv(N, bnt), KT = cdiv(K, BK);
    if (s > KT || (s > 1 && (tiles >= ctas || tiles > persistent_ws::ARRIVALS / persistent_ws::WARPS_PER_TILE))) return -1;
    const int fixup = s > 1 ? 1 + cdiv((1 + s) * min(M, tn) * bnt * 2, (tn + bnt) * BK) : 0;
    return (long long)cdiv(tiles * s, ctas) * (cdiv(KT, s) + fixup) * (bnt + tn + 32);
}

// The cheapest plan, by one warp: lane l (0-15) costs 128 >> (l / 8) features a tile with l % 8 + 1 slices; the lowest
// cost wins, ties to the lower lane (the wider tile, then fewer slices).
__device__ __forceinline__ Plan plan_for(int M, int N, int K, int ctas, int tn) {
    const int lane = threadIdx.x % 32;
    const long long mine = lane < 16 ? plan_cost(M, N, K, ctas, tn, 128 >> (lane / 8), lane % 8 + 1) : -1;
    const int best = persistent_ws::cheapest_lane(mine < 0 ? 0x7fffffffffffffffLL : mine);  // lane 0's (128, 1) always runs
    return Plan{128 >> (best / 8), best % 8 + 1};
}

// The producer thread: every unit's k tiles, TN / 16 boxes of A and the tile's BNT / 64 panels of B.
template <int TN, int BNT>
__device__ __forceinline__ void produce(const TensorMap& tma_a, const TensorMap& tma_b, const Walk& w, unsigned char* smem,
                                        uint64_t* full, uint64_t* empty) {
    using R = Ring<TN>;
    int it = 0;
#pragma unroll 1
    for (int u = blockIdx.x; u < w.units<true>(); u += gridDim.x) {
        int t, tm, tn, z, k0, k1;
        w.unit<true>(u, t, tm, tn, z, k0, k1);
#pragma unroll 1
        for (int kt = k0; kt < k1; ++kt, ++it) {
            const int s = it % R::STAGES;
            if (it >= R::STAGES) mbar_wait(&empty[s], (it / R::STAGES - 1) & 1);
            unsigned char* st = smem + s * R::STAGE_BYTES;
            mbar_arrive_expect_tx(&full[s], R::A_BYTES + BNT / 64 * SWAP_PANEL);
#pragma unroll
            for (int q = 0; q < TN / 16; ++q) tma_load_2d(st + q * SWAP_A_BOX, &tma_a, &full[s], kt * BK, tm * TN + q * 16);
#pragma unroll
            for (int p = 0; p < BNT / 64; ++p) tma_load_2d(st + R::A_BYTES + p * SWAP_PANEL, &tma_b, &full[s], tn * BNT + p * 64, kt * BK);
        }
    }
}

// 08's fix-up on C^T: store this slice's partial to plane z of W, count the warp's arrival; the last of the `splits`
// sums every plane in z order into acc, zeroes the counter and returns true: it stores C.
template <int TN>
__device__ __forceinline__ bool last_split_sums(float (&acc)[TN / 2], float* W, unsigned int* arrivals, int splits, int z, int M,
                                                int N, int m0, int n0) {
    const size_t plane = (size_t)M * N;
    for_each_swapped<TN>(M, N, m0, n0, [&](int i, size_t at) { W[z * plane + at] = acc[i]; });
    if (!persistent_ws::last_arrival(arrivals, splits)) return false;
#pragma unroll
    for (int i = 0; i < TN / 2; ++i) acc[i] = 0.0f;
#pragma unroll 1
    for (int p = 0; p < splits; ++p) for_each_swapped<TN>(M, N, m0, n0, [&](int i, size_t at) { acc[i] += __ldcg(W + p * plane + at); });
    return true;
}

// Consumer warpgroup c (0 or 1): features [64c, 64c + 64) of every unit's tile, one wgmma group a k tile kept in
// flight (05's), then C (split: the fix-up first). With BNT = 64 warpgroup 1 has no features and returns.
template <typename T, int TN, int BNT>
__device__ __forceinline__ void consume(const Walk& w, const unsigned char* smem, uint64_t* full, uint64_t* empty, float* __restrict__ C,
                                        float* W, unsigned int* arrivals, int M, int N, int c) {
    using R = Ring<TN>;
    if (c * 64 >= BNT) return;
    int it = 0;
#pragma unroll 1
    for (int u = blockIdx.x; u < w.units<true>(); u += gridDim.x) {
        int t, tm, tn, z, k0, k1;
        w.unit<true>(u, t, tm, tn, z, k0, k1);
        float acc[TN / 2] = {};
#pragma unroll 1
        for (int kt = k0; kt < k1; ++kt, ++it) {
            const int s = it % R::STAGES;
            mbar_wait(&full[s], (it / R::STAGES) & 1);
            const unsigned char* st = smem + s * R::STAGE_BYTES;
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < BK / 16; ++ks)
                wgmma_swapped<TN, T>(acc, swizzled_desc(st + R::A_BYTES + c * SWAP_PANEL + ks * 16 * 128, SWAP_PANEL, 1024),
                                     swizzled_desc(st + ks * 32, 16, 1024));
            wgmma_commit();
            wgmma_wait<1>();
            if (kt > k0) mbar_arrive(&empty[(it - 1) % R::STAGES]);
        }
        wgmma_wait<0>();
        fence_acc(acc);
        mbar_arrive(&empty[(it - 1) % R::STAGES]);
        const int m0 = tm * TN, n0 = tn * BNT + c * 64;
        if (w.splits > 1 && !last_split_sums<TN>(acc, W, &arrivals[t * persistent_ws::WARPS_PER_TILE + c * 4 + threadIdx.x % 128 / 32],
                                                 w.splits, z, M, N, m0, n0))
            continue;
        for_each_swapped<TN>(M, N, m0, n0, [&](int i, size_t at) { C[at] = acc[i]; });
    }
}

// The block: warp 0 plans (the block reads the plan after the barrier), warpgroup 0's first thread loads, warpgroups
// 1 and 2 multiply and store.
template <typename T, int TN>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, float* W, unsigned int* arrivals,
                                    int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[SWAP_MAX_STAGES], empty[SWAP_MAX_STAGES];
    __shared__ Plan planned;
    const int tid = threadIdx.x, wg = tid / 128;
    if (tid < 32) {
        const Plan p = plan_for(M, N, K, gridDim.x, TN);
        if (tid == 0) {
            planned = p;
            ring_init<Ring<TN>::STAGES>(full, empty, 128 * (p.bnt / 64));  // every thread of each consumer warpgroup with features
        }
    }
    __syncthreads();
    const Plan plan = planned;
    const Walk w{cdiv(M, TN), cdiv(N, plan.bnt), cdiv(K, BK), plan.splits};

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            if (plan.bnt == 128) produce<TN, 128>(tma_a, tma_b, w, smem, full, empty);
            else produce<TN, 64>(tma_a, tma_b, w, smem, full, empty);
        }
    } else {
        setmaxnreg_inc<232>();
        if (plan.bnt == 128) consume<T, TN, 128>(w, smem, full, empty, C, W, arrivals, M, N, wg - 1);
        else consume<T, TN, 64>(w, smem, full, empty, C, W, arrivals, M, N, wg - 1);
    }
}
}  // namespace swap_ab

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_swap_ab(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* __restrict__ W,
          int M, int N, int K) {
    if (M <= 16) swap_ab::run<T, 16>(tma_a, tma_b, C, W, swap_arrivals, M, N, K);
    else swap_ab::run<T, 64>(tma_a, tma_b, C, W, swap_arrivals, M, N, K);
}
