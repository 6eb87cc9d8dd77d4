// 10 swap_ab: for M <= 64 tokens, compute C^T = B^T A^T, so the token count becomes wgmma's N.
// wgmma's M is 64 rows a warpgroup, so 07 and 08 spend a 64-row instruction (and a 128-row A tile)
// on 1 to 16 tokens of a decode step: at M = 1, 63 of every 64 rows the tensor core multiplies are
// zeros, and each block's 128 x 64 x BK of work holds one useful row. Swapped, the weight matrix B
// fills wgmma's 64 rows (a block: 64 or 128 output features, BNT) and the tokens are its N, which
// may be any multiple of 8: 16 or 64 here (TN, the smallest that holds M). Operands stay where
// they are: B's 64 x 64 TMA boxes (K rows, N contiguous) are wgmma's A read MN-major (imm-trans-a
// = 1), A's 128 x 64 boxes (tokens, K contiguous) its B read K-major (imm-trans-b = 0), of which
// the first TN rows are used. The accumulators hold C^T: lane l of warp w holds features
// 16w + l/4 (+8) and tokens 2(l%4) (+1) (+8j), so the epilogue writes C row-major element by
// element, C[token][feature]: 8 consecutive features a token, each 32-byte sector whole.
// With every tile the full M, a decode shape has N / BNT tiles (32 at N = 4096), so K is split
// (1 to 8 slices, any count, not only powers of two) with 08's fix-up (partials in a workspace
// plane a slice, per-warp arrival counters, the last warp sums in slice order), and the plan is
// 08's kind of estimate: waves x (k tiles a unit + fix-up) x (BNT + TN + 32), BNT 128 (two consumer
// warpgroups) or 64 (one; the other waits). Each stage holds one A box and BNT / 64 B panels,
// 32 KB, so the ring is 7 deep (08's is 4 of 48 KB): more of B in flight a block, which is what a
// decode shape, bound by reading B from DRAM, is short of. M > 64 runs 08's code unchanged
// (persistent_ws::run_per_shape with 8 slices): swapped with TN = 128, M = 128 ran at 17-95 % of
// cuBLAS where 08 ran at 57-100 % (H100, 2026-11-25). N % 8 == 0, K % 8 == 0, any M.
#include "persistent_ws.cuh"

// The persistent grid: one block per SM whenever N >= SMs (kernels/sources.py reads BM and BN here). BM is also
// the rows of A's TMA box, which 08's path needs whole; the swapped path uses its first TN rows.
enum : int {
    BM = 128,
    BN = 1,
    SWAP_MAX_M = 64,   // the most tokens swapped; more run 08's path
    SWAP_STAGES = 7,
    SWAP_A_BYTES = BM * 64 * 2,                           // one 128 x 64 box of A
    SWAP_PANEL = 64 * 128,                                // one 64 x 64 box of B, 128-byte rows
    SWAP_STAGE_BYTES = SWAP_A_BYTES + 2 * SWAP_PANEL,     // 32 KB
    SMEM_BYTES = SWAP_STAGES * SWAP_STAGE_BYTES,          // dynamic: also covers 08's 4 x 48 KB ring
};

__device__ unsigned int swap_arrivals[persistent_ws::ARRIVALS];  // zero when the module loads; each tile's last arrival zeroes its own

namespace swap_ab {
using persistent_ws::BK;
using persistent_ws::cdiv;
using persistent_ws::Walk;

// d (64 x TN: features x tokens) += A (64 x 16, MN-major: B's box) . B (16 x TN, K-major: A's box); FP32 accumulators
// laid out like wgmma<N, T>'s.
template <int TN, typename T>
__device__ __forceinline__ void wgmma_swapped(float (&d)[TN / 2], uint64_t a, uint64_t b);

template <>
__device__ __forceinline__ void wgmma_swapped<16, __nv_bfloat16>(float (&d)[8], uint64_t a, uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "l"(a), "l"(b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_swapped<16, __half>(float (&d)[8], uint64_t a, uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "l"(a), "l"(b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_swapped<64, __nv_bfloat16>(float (&d)[32], uint64_t a, uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(a), "l"(b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_swapped<64, __half>(float (&d)[32], uint64_t a, uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 1, 0;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(a), "l"(b), "r"(1));
}

struct Plan {
    int bnt, splits;
};

// The estimated k-tile times of the swapped product in tiles of `bnt` features, each tile's K in `s` slices, on
// `ctas` blocks, or -1 where that plan may not run: 08's plan_cost with the tile's rows being the tokens, TN of them
// in a k tile's loads (the rest of A's 128-row box is zeros TMA writes without reading), min(M, TN) in the partials.
__device__ __forceinline__ long long plan_cost(int M, int N, int K, int ctas, int tn, int bnt, int s) {
    const int tiles = cdiv(N, bnt), KT = cdiv(K, BK);
    if (s > KT || (s > 1 && (tiles >= ctas || tiles > persistent_ws::ARRIVALS / persistent_ws::WARPS_PER_TILE))) return -1;
    const int fixup = s > 1 ? 1 + cdiv((1 + s) * min(M, tn) * bnt * 2, (tn + bnt) * BK) : 0;
    return (long long)cdiv(tiles * s, ctas) * (cdiv(KT, s) + fixup) * (bnt + tn + 32);
}

// The cheapest plan, by one warp: lane l (0-15) costs 128 >> (l / 8) features a tile with l % 8 + 1 slices; the lowest
// cost wins, ties to the lower lane (the wider tile, then fewer slices).
__device__ __forceinline__ Plan plan_for(int M, int N, int K, int ctas, int tn) {
    const int lane = threadIdx.x % 32;
    const long long mine = lane < 16 ? plan_cost(M, N, K, ctas, tn, 128 >> (lane / 8), lane % 8 + 1) : -1;
    long long cost = mine < 0 ? 0x7fffffffffffffffLL : mine;  // lane 0's (128, 1) always runs
    int best = lane;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        const long long other = __shfl_xor_sync(0xffffffffu, cost, offset);
        const int other_lane = __shfl_xor_sync(0xffffffffu, best, offset);
        if (other < cost || (other == cost && other_lane < best)) {
            cost = other;
            best = other_lane;
        }
    }
    return Plan{128 >> (best / 8), best % 8 + 1};
}

// The producer thread: every unit's k tiles, A's first 128 rows as one box and the tile's BNT / 64 panels of B.
template <int BNT>
__device__ __forceinline__ void produce(const TensorMap& tma_a, const TensorMap& tma_b, const Walk& w, unsigned char* smem,
                                        uint64_t* full, uint64_t* empty) {
    int it = 0;
#pragma unroll 1
    for (int u = blockIdx.x; u < w.units<true>(); u += gridDim.x) {
        int t, tm, tn, z, k0, k1;
        w.unit<true>(u, t, tm, tn, z, k0, k1);
#pragma unroll 1
        for (int kt = k0; kt < k1; ++kt, ++it) {
            const int s = it % SWAP_STAGES;
            if (it >= SWAP_STAGES) mbar_wait(&empty[s], (it / SWAP_STAGES - 1) & 1);
            unsigned char* st = smem + s * SWAP_STAGE_BYTES;
            mbar_arrive_expect_tx(&full[s], SWAP_A_BYTES + BNT / 64 * SWAP_PANEL);
            tma_load_2d(st, &tma_a, &full[s], kt * BK, 0);
#pragma unroll
            for (int p = 0; p < BNT / 64; ++p) tma_load_2d(st + SWAP_A_BYTES + p * SWAP_PANEL, &tma_b, &full[s], tn * BNT + p * 64, kt * BK);
        }
    }
}

// Visits a warp's share of C^T the way the accumulators hold it: f(d index, token, feature) for tokens < M and
// features < N.
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

// 08's fix-up on C^T: store this slice's partial to plane z of W, count the warp's arrival; the last of the `splits`
// sums every plane in z order into acc, zeroes the counter and returns true: it stores C.
template <int TN>
__device__ __forceinline__ bool last_split_sums(float (&acc)[TN / 2], float* W, unsigned int* arrivals, int splits, int z, int M,
                                                int N, int n0) {
    const size_t plane = (size_t)M * N;
    for_each_element<TN>(M, N, n0, [&](int i, size_t at) { W[z * plane + at] = acc[i]; });
    __threadfence();
    __syncwarp();
    unsigned int before = 0;
    if (threadIdx.x % 32 == 0) before = atomicAdd(arrivals, 1u);
    if (__shfl_sync(0xffffffffu, before, 0) != (unsigned int)splits - 1) return false;
    __threadfence();
    if (threadIdx.x % 32 == 0) *arrivals = 0;
#pragma unroll
    for (int i = 0; i < TN / 2; ++i) acc[i] = 0.0f;
#pragma unroll 1
    for (int p = 0; p < splits; ++p) for_each_element<TN>(M, N, n0, [&](int i, size_t at) { acc[i] += __ldcg(W + p * plane + at); });
    return true;
}

// Consumer warpgroup c (0 or 1): features [64c, 64c + 64) of every unit's tile, one wgmma group a k tile kept in
// flight (05's), then C (split: the fix-up first). With BNT = 64 warpgroup 1 has no features and returns.
template <typename T, int TN, int BNT>
__device__ __forceinline__ void consume(const Walk& w, const unsigned char* smem, uint64_t* full, uint64_t* empty, float* __restrict__ C,
                                        float* W, unsigned int* arrivals, int M, int N, int c) {
    if (c * 64 >= BNT) return;
    int it = 0;
#pragma unroll 1
    for (int u = blockIdx.x; u < w.units<true>(); u += gridDim.x) {
        int t, tm, tn, z, k0, k1;
        w.unit<true>(u, t, tm, tn, z, k0, k1);
        float acc[TN / 2] = {};
#pragma unroll 1
        for (int kt = k0; kt < k1; ++kt, ++it) {
            const int s = it % SWAP_STAGES;
            mbar_wait(&full[s], (it / SWAP_STAGES) & 1);
            const unsigned char* st = smem + s * SWAP_STAGE_BYTES;
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < BK / 16; ++ks)
                wgmma_swapped<TN, T>(acc, swizzled_desc(st + SWAP_A_BYTES + c * SWAP_PANEL + ks * 16 * 128, SWAP_PANEL, 1024),
                                     swizzled_desc(st + ks * 32, 16, 1024));
            wgmma_commit();
            wgmma_wait<1>();
            if (kt > k0) mbar_arrive(&empty[(it - 1) % SWAP_STAGES]);
        }
        wgmma_wait<0>();
        fence_acc(acc);
        mbar_arrive(&empty[(it - 1) % SWAP_STAGES]);
        const int n0 = tn * BNT + c * 64;
        if (w.splits > 1 && !last_split_sums<TN>(acc, W, &arrivals[t * persistent_ws::WARPS_PER_TILE + c * 4 + threadIdx.x % 128 / 32],
                                                 w.splits, z, M, N, n0))
            continue;
        for_each_element<TN>(M, N, n0, [&](int i, size_t at) { C[at] = acc[i]; });
    }
}

template <typename T, int TN>
__device__ __forceinline__ void consume_planned(const Plan& plan, const Walk& w, const unsigned char* smem, uint64_t* full, uint64_t* empty,
                                                float* __restrict__ C, float* W, unsigned int* arrivals, int M, int N, int c) {
    if (plan.bnt == 128) consume<T, TN, 128>(w, smem, full, empty, C, W, arrivals, M, N, c);
    else consume<T, TN, 64>(w, smem, full, empty, C, W, arrivals, M, N, c);
}

// M <= SWAP_MAX_M: the swapped product, TN the fewest tokens of 16 and 64 that hold M.
template <typename T>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, float* W, unsigned int* arrivals,
                                    int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[SWAP_STAGES], empty[SWAP_STAGES];
    __shared__ Plan planned;
    const int tid = threadIdx.x, wg = tid / 128, tn = M <= 16 ? 16 : 64;
    if (tid < 32) {  // warp 0 plans; the block reads the plan after the barrier
        const Plan p = plan_for(M, N, K, gridDim.x, tn);
        if (tid == 0) {
            planned = p;
            ring_init<SWAP_STAGES>(full, empty, 128 * (p.bnt / 64));  // every thread of each consumer warpgroup with features
        }
    }
    __syncthreads();
    const Plan plan = planned;
    const Walk w{1, cdiv(N, plan.bnt), cdiv(K, BK), plan.splits};

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            if (plan.bnt == 128) produce<128>(tma_a, tma_b, w, smem, full, empty);
            else produce<64>(tma_a, tma_b, w, smem, full, empty);
        }
    } else {
        setmaxnreg_inc<232>();
        if (tn == 16) consume_planned<T, 16>(plan, w, smem, full, empty, C, W, arrivals, M, N, wg - 1);
        else consume_planned<T, 64>(plan, w, smem, full, empty, C, W, arrivals, M, N, wg - 1);
    }
}
}  // namespace swap_ab

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_swap_ab(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* __restrict__ W,
          int M, int N, int K) {
    if (M <= SWAP_MAX_M) swap_ab::run<T>(tma_a, tma_b, C, W, swap_arrivals, M, N, K);
    else persistent_ws::run_per_shape<T, 8>(tma_a, tma_b, C, W, swap_arrivals, M, N, K);
}
