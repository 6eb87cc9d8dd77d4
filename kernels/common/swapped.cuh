// The swapped pipeline, C^T = B^T A^T with the tokens as wgmma's N, in either precision: the body of walk F's 06
// (swap_ab_fp8) and 07 (swap_plan_fp8), and of walk D's 13 (swap_plan) up to 128 tokens. A tile is BNT = 128 features
// (two consumer warpgroups) or 64 (one; the other has none) by TN tokens (TN = 16, 64 or 128: m64nTNk32 for FP8,
// m64nTNk16 for 16-bit); B's 64-feature boxes are wgmma's A, A's 16-row boxes its B. Both precisions move 128-byte rows
// (128 FP8 or 64 16-bit elements of K a k tile), so a box and a stage have the same bytes in both: a stage is TN / 16
// boxes of A then two of B (1 KB aligned), the ring as deep as RING_BYTES allows (12 at TN = 16, 9 at 64, 6 at 128).
// What differs is the operands' layout, which `Operands` says (operands.cuh: Fp8, walk F's; Bit16<T>, walk D's).
// A is loaded in boxes of 16 tokens, only those below M. The accumulators hold C^T (lane l of warp w: features
// 16w + l/4 (+8), tokens 2(l%4) (+1) (+8j)); the epilogue writes C[token][feature], 8 consecutive features a token
// (whole 32-byte sectors). The grid walks tile-slice units (a tile's K in `splits` slices, side by side); how a sliced
// unit's partials meet is the caller's (`run`'s `finish`; `run_planned`: walk F 07's fix-up in the accumulators' order).
// Warp 0 makes or reads the plan (`plan_fn`, before the ring is set up), warpgroup 0's first thread loads,
// warpgroups 1 and 2 multiply, one wgmma group a k tile kept in flight (03's), and store.
// The per-warp release and arrival count are walk F's (persistent_fp8.cuh, split_k_fp8.cuh): no FP8 in them.
#pragma once
#include "operands.cuh"
#include "split_k_fp8.cuh"

namespace swapped {
using operands::B_BOX, operands::Bit16, operands::Fp8, persistent_fp8::cdiv;

enum : int {
    A_BOX = 16 * 128,  // one box of A: 16 tokens x 128 bytes of K
    MAX_STAGES = 12,
    RING_BYTES = 12 * (16 * 128 + 2 * 64 * 128),  // dynamic: 12 x 18 KB (TN = 16), 9 x 24 KB (64), 6 x 32 KB (128)
    MAX_SLICES = 8,                               // run_planned's K slices at most: its fix-up's registers
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
template <int TN, int BNT, typename Operands>
__device__ __forceinline__ void produce(const Operands& ops, const TensorMap& tma_a, const TensorMap& tma_b, const Plan& plan, int M,
                                        int N, int KT, unsigned char* smem, uint64_t* full, uint64_t* empty) {
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
            for (int q = 0; q < a_boxes; ++q) tma_load_2d(st + q * A_BOX, &tma_a, &full[s], kt * Operands::K_TILE, q * 16);
#pragma unroll
            for (int p = 0; p < BNT / 64; ++p) ops.load_b(st + R::A_BYTES + p * B_BOX, &tma_b, &full[s], kt, t * BNT + p * 64);
        }
    }
}

// Consumer warpgroup c (0 or 1): features [64c, 64c + 64) of every unit's tile, then C. A sliced unit (splits > 1)
// first calls finish(acc, splits, tile, slice, c, n0), and C is stored only where it returns true (the slice that completes
// the tile). With BNT = 64 warpgroup 1 has no features and returns.
template <int TN, int BNT, typename Operands, typename Finish>
__device__ __forceinline__ void consume(const Operands& ops, const Plan& plan, const unsigned char* smem, uint64_t* full, uint64_t* empty,
                                        float* __restrict__ C, int M, int N, int KT, int c, Finish finish) {
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
            ops.template k_tile<TN>(acc, st + R::A_BYTES + c * B_BOX, st);  // this warpgroup's 64 features . TN tokens
            wgmma_wait<1>();  // kt's group stays pending; kt-1's is done: release its stage
            if (kt > k0) persistent_fp8::release<1>(&empty[(it - 1) % R::STAGES]);
        }
        wgmma_wait<0>();
        fence_acc(acc);
        persistent_fp8::release<1>(&empty[(it - 1) % R::STAGES]);
        ops.scale(acc);
        const int n0 = t * BNT + c * 64;
        if (plan.splits > 1 && !finish(acc, plan.splits, t, z, c, n0)) continue;
        for_each_swapped<TN>(M, N, 0, n0, [&](int i, size_t at) { C[at] = acc[i]; });
    }
}

// The block. plan_fn(): the plan, called by warp 0 (all its lanes) before the ring is set up, its answer read by the
// block after the barrier. finish: consume's. DEPENDENT (walk F 10): a programmatic dependent launch, as walk D 15's
// (host_plan.cuh): after the setup every thread lets the next kernel launch and waits for the one before.
template <int TN, bool DEPENDENT = false, typename Operands, typename PlanFn, typename Finish>
__device__ __forceinline__ void run(const Operands& ops, const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, int M, int N,
                                    int K, PlanFn plan_fn, Finish finish) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[MAX_STAGES], empty[MAX_STAGES];
    __shared__ Plan planned;
    const int tid = threadIdx.x, wg = tid / 128, KT = cdiv(K, Operands::K_TILE);
    if (tid < 32) {
        const Plan p = plan_fn();
        if (tid == 0) {
            planned = p;
            ring_init<Ring<TN>::STAGES>(full, empty, 4 * (p.bnt / 64));  // every consumer warp with features
        }
    }
    __syncthreads();
    const Plan plan = planned;
    after_setup<DEPENDENT>();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            if (plan.bnt == 128) produce<TN, 128>(ops, tma_a, tma_b, plan, M, N, KT, smem, full, empty);
            else produce<TN, 64>(ops, tma_a, tma_b, plan, M, N, KT, smem, full, empty);
        }
    } else {
        setmaxnreg_inc<232>();
        if (plan.bnt == 128) consume<TN, 128>(ops, plan, smem, full, empty, C, M, N, KT, wg - 1, finish);
        else consume<TN, 64>(ops, plan, smem, full, empty, C, M, N, KT, wg - 1, finish);
    }
}

// One consumer warp's fix-up in the accumulators' order (walk F's 07), for R accumulators a lane (TN / 2 here; walk F
// 08's 128 x 256 tiles hold 128). Slice z's partial goes to W as the warp holds it: float4 q of lane l at
// ((z * tiles + t) * WARPS + w) * R / 4 * 32 + q * 32 + l (w: the tile's consumer warp, 0-7), 512 bytes a warp
// instruction; the arrival is counted (split_k_fp8::last_arrival). The last of `splits` loads all slices' float4s of
// CHUNK q at once (up to 4; 2 beside 128 accumulators), adds them in slice order into acc and returns true: it stores C.
template <int R>
__device__ __forceinline__ bool fragment_fixup(float (&acc)[R], float* W, unsigned int* arrival, int splits, int tiles, int t, int z,
                                               int w) {
    enum : int { Q = R / 4, CHUNK = R >= 128 ? 2 : (Q < 4 ? Q : 4) };
    const size_t plane = (size_t)tiles * persistent_fp8::WARPS * Q * 32;  // float4s a slice
    float4* mine = reinterpret_cast<float4*>(W) + ((size_t)t * persistent_fp8::WARPS + w) * Q * 32 + threadIdx.x % 32;
#pragma unroll
    for (int q = 0; q < Q; ++q) __stcg(mine + z * plane + q * 32, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
    if (!split_k_fp8::last_arrival(arrival, splits)) return false;
#pragma unroll
    for (int q0 = 0; q0 < Q; q0 += CHUNK) {
        float4 part[MAX_SLICES][CHUNK];
#pragma unroll
        for (int p = 0; p < MAX_SLICES; ++p)
#pragma unroll
            for (int j = 0; j < CHUNK; ++j)
                if (p < splits) part[p][j] = __ldcg(mine + p * plane + (q0 + j) * 32);  // through L2: other SMs wrote them
#pragma unroll
        for (int j = 0; j < CHUNK; ++j) {
            float* sum = &acc[4 * (q0 + j)];
            sum[0] = sum[1] = sum[2] = sum[3] = 0.0f;
#pragma unroll
            for (int p = 0; p < MAX_SLICES; ++p)
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

// The swapped pipeline on a plan made on the host (walk F's kernels/hopper_fp8/swap_plan.py): BNT features a tile, K in
// `slices` (at most MAX_SLICES), partials met by fragment_fixup on `arrivals` (a counter per tile and consumer warp,
// zero between launches). Thread 0 prefetches the tensor maps instead of warp 0 making a plan before the first load.
template <int TN, bool DEPENDENT = false, typename Operands>
__device__ __forceinline__ void run_planned(const Operands& ops, const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C,
                                            float* W, unsigned int* arrivals, int M, int N, int K, int bnt, int slices) {
    run<TN, DEPENDENT>(
        ops, tma_a, tma_b, C, M, N, K,
        [&] {
            if (threadIdx.x == 0) {
                prefetch_tensormap(tma_a);
                prefetch_tensormap(tma_b);
            }
            return Plan{bnt, slices};
        },
        [&](float(&acc)[TN / 2], int splits, int t, int z, int c, int n0) {
            const int w = c * 4 + threadIdx.x % 128 / 32;
            return fragment_fixup<TN / 2>(acc, W, &arrivals[t * persistent_fp8::WARPS + w], splits, cdiv(N, bnt), t, z, w);
        });
}

// The kernels' dispatch on the host's plan (walk D 13, 14 and 18, walk F 07 and 10): the swapped pipeline at tn tokens a
// tile (16, 64 or 128, DEPENDENT as run's); false where tn is 0 (above 128 tokens: the caller's own path).
template <bool DEPENDENT = false, typename Operands>
__device__ __forceinline__ bool run_swapped(const Operands& ops, const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C,
                                            float* W, unsigned int* arrivals, int M, int N, int K, int tn, int bnt, int slices) {
    if (tn == 16) run_planned<16, DEPENDENT>(ops, tma_a, tma_b, C, W, arrivals, M, N, K, bnt, slices);
    else if (tn == 64) run_planned<64, DEPENDENT>(ops, tma_a, tma_b, C, W, arrivals, M, N, K, bnt, slices);
    else if (tn == 128) run_planned<128, DEPENDENT>(ops, tma_a, tma_b, C, W, arrivals, M, N, K, bnt, slices);
    else return false;
    return true;
}
}  // namespace swapped
