// Walk F's swapped pipeline, the body of stages 06 (swap_ab_fp8) and 07 (swap_plan_fp8): C^T = B^T A^T, the tokens as
// wgmma's N. A tile is BNT = 128 features (two consumer warpgroups) or 64 (one; the other has none) by TN tokens
// (TN = 16, 64 or 128: m64nTNk32); B's 64-row boxes are wgmma's A, A's 16-row boxes its B, both K-major as the FP8
// class stores them, so the swap is 03's descriptors with the operands exchanged. A is loaded in boxes of 16 tokens,
// only those below M; a stage is TN / 16 boxes of A then two of B (1 KB aligned), and the ring as deep as RING_BYTES
// allows (12 at TN = 16, 9 at 64, 6 at 128). The accumulators hold C^T (lane l of warp w: features 16w + l/4 (+8),
// tokens 2(l%4) (+1) (+8j)); the epilogue writes C[token][feature], 8 consecutive features a token (whole 32-byte
// sectors). The grid walks tile-slice units (a tile's K in `splits` slices, side by side); how a sliced unit's
// partials meet is the stage's own (`run`'s `finish`).
// Warp 0 makes or reads the plan (`plan_fn`, before the ring is set up), warpgroup 0's first thread loads,
// warpgroups 1 and 2 multiply, one wgmma group a k tile kept in flight (03's), and store.
#pragma once
#include "persistent_fp8.cuh"

namespace swap_ab_fp8 {
using persistent_fp8::BK;
using persistent_fp8::cdiv;

enum : int {
    A_BOX = 16 * 128,  // one 16 x 128 box of A (tokens x K bytes)
    B_BOX = 64 * 128,  // one 64 x 128 box of B (features x K bytes)
    MAX_STAGES = 12,
    RING_BYTES = 12 * (16 * 128 + 2 * 64 * 128),  // dynamic: 12 x 18 KB (TN = 16), 9 x 24 KB (64), 6 x 32 KB (128)
};

// The ring for TN tokens a tile: a stage holds TN / 16 boxes of A, then two of B, as many as fit.
template <int TN>
struct Ring {
    enum : int { A_BYTES = TN / 16 * A_BOX, STAGE_BYTES = A_BYTES + 2 * B_BOX, STAGES = RING_BYTES / STAGE_BYTES };
};

struct Plan {
    int bnt, splits;
};

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
            mbar_arrive_expect_tx(&full[s], a_boxes * A_BOX + BNT / 64 * B_BOX);
#pragma unroll 1
            for (int q = 0; q < a_boxes; ++q) tma_load_2d(st + q * A_BOX, &tma_a, &full[s], kt * BK, q * 16);
#pragma unroll
            for (int p = 0; p < BNT / 64; ++p) tma_load_2d(st + R::A_BYTES + p * B_BOX, &tma_b, &full[s], kt * BK, t * BNT + p * 64);
        }
    }
}

// Consumer warpgroup c (0 or 1): features [64c, 64c + 64) of every unit's tile, then C. A sliced unit (splits > 1)
// first calls finish(acc, splits, tile, slice, c, n0), and C is stored only where it returns true (the slice that completes
// the tile). With BNT = 64 warpgroup 1 has no features and returns.
template <int TN, int BNT, typename Finish>
__device__ __forceinline__ void consume(const Plan& plan, const unsigned char* smem, uint64_t* full, uint64_t* empty, float* __restrict__ C,
                                        const float* scale_a, const float* scale_b, int M, int N, int KT, int c, Finish finish) {
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
            wgmma_fp8_k_tile<TN, BK, true>(acc, st + R::A_BYTES + c * B_BOX, st);  // this warpgroup's 64 features . TN tokens
            wgmma_wait<1>();  // kt's group stays pending; kt-1's is done: release its stage
            if (kt > k0) persistent_fp8::release<1>(&empty[(it - 1) % R::STAGES]);
        }
        wgmma_wait<0>();
        fence_acc(acc);
        persistent_fp8::release<1>(&empty[(it - 1) % R::STAGES]);
        dequantise(acc, scale_a, scale_b);
        const int n0 = t * BNT + c * 64;
        if (plan.splits > 1 && !finish(acc, plan.splits, t, z, c, n0)) continue;
        for_each_swapped<TN>(M, N, 0, n0, [&](int i, size_t at) { C[at] = acc[i]; });
    }
}

// The block. plan_fn(): the plan, called by warp 0 (all its lanes) before the ring is set up, its answer read by the
// block after the barrier. finish: consume's.
template <int TN, typename PlanFn, typename Finish>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, const float* scale_a,
                                    const float* scale_b, int M, int N, int K, PlanFn plan_fn, Finish finish) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[MAX_STAGES], empty[MAX_STAGES];
    __shared__ Plan planned;
    const int tid = threadIdx.x, wg = tid / 128, KT = cdiv(K, BK);
    if (tid < 32) {
        const Plan p = plan_fn();
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
        if (plan.bnt == 128) consume<TN, 128>(plan, smem, full, empty, C, scale_a, scale_b, M, N, KT, wg - 1, finish);
        else consume<TN, 64>(plan, smem, full, empty, C, scale_a, scale_b, M, N, KT, wg - 1, finish);
    }
}
}  // namespace swap_ab_fp8
