// Walk D's persistent warp-specialized kernel, the body of stages 04 (persistent), 05 (mma_overlap),
// 07 (narrow_tiles) and 08 (split_k): one block per SM loops over work units in grouped order
// (grouped_tile); warpgroup 0's first thread loads each k tile of A and B with TMA into a
// STAGES-deep ring of shared memory; warpgroups 1 and 2 each multiply 64 rows of it with wgmma
// and store their accumulators.
//   KEEP_ONE_IN_FLIGHT false (04): wait for k tile kt's wgmmas (wait_group 0), release its stage.
//   KEEP_ONE_IN_FLIGHT true  (05, 07, 08): issue kt, wait until only kt's group is pending
//                                  (wait_group 1), release kt-1's stage: the tensor pipe always
//                                  holds the next group.
// A work unit is a 128 x WIDTH output tile and a slice of its k tiles. 04 and 05 (run): WIDTH = BN = 256, one
// slice. 07 and 08 (run_per_shape): WIDTH in {256, 128, 64} and up to MAX_SPLITS slices, picked per
// shape by plan_for; slices' partial sums meet in a workspace (last_split_sums). The stage/phase
// counters run on across units. N % 8 == 0, K % 8 == 0 (TMA's 16-byte global strides), any M.
#pragma once
#include "hopper.cuh"

namespace persistent_ws {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 384, GROUP = 16;  // BN: the widest tile
constexpr int A_BYTES = BM * BK * 2, B_PANEL = BK * 128, STAGE_BYTES = A_BYTES + BK * BN * 2;
// Enumerators, not constexpr ints: NVRTC keeps every namespace-scope constexpr int as an initialised global, and a new
// one would change 04's and 05's CUBINs (their code_sha256) though not their code.
enum : int {
    ARRIVALS = 8 * 1024,    // split-K arrival counters, one per (tile, consumer warp): at most ARRIVALS / 8 tiles split
    WARPS_PER_TILE = 8,
    SMEM_BYTES = STAGES * STAGE_BYTES,  // dynamic
};

__device__ __forceinline__ int cdiv(int a, int b) { return (a + b - 1) / b; }

// The tiles of one walk and how each tile's KT k tiles are sliced. SPLIT false: one slice, known at compile time.
struct Walk {
    int tiles_m, tiles_n, KT, splits;

    template <bool SPLIT>
    __device__ __forceinline__ int units() const { return SPLIT ? tiles_m * tiles_n * splits : tiles_m * tiles_n; }

    // Unit u -> tile t (grouped order: (tm, tn)), slice z and its k tiles [k0, k1); a tile's slices are consecutive
    // units, so they run side by side. splits <= KT, so no slice is empty.
    template <bool SPLIT>
    __device__ __forceinline__ void unit(int u, int& t, int& tm, int& tn, int& z, int& k0, int& k1) const {
        t = SPLIT ? u / splits : u;
        z = SPLIT ? u % splits : 0;
        grouped_tile<GROUP>(t, tiles_m, tiles_n, tm, tn);
        k0 = SPLIT ? z * KT / splits : 0;
        k1 = SPLIT ? (z + 1) * KT / splits : KT;
    }
};

// The producer thread: every unit's k tiles, A as one 128 x 64 box and B as WIDTH / 64 boxes of 64 x 64.
template <int WIDTH, bool SPLIT>
__device__ __forceinline__ void produce(const TensorMap& tma_a, const TensorMap& tma_b, const Walk& w, unsigned char* smem,
                                        uint64_t* full, uint64_t* empty) {
    int it = 0;
#pragma unroll 1
    for (int u = blockIdx.x; u < w.units<SPLIT>(); u += gridDim.x) {
        int t, tm, tn, z, k0, k1;
        w.unit<SPLIT>(u, t, tm, tn, z, k0, k1);
#pragma unroll 1
        for (int kt = k0; kt < k1; ++kt, ++it) {
            const int s = it % STAGES;
            if (it >= STAGES) mbar_wait(&empty[s], (it / STAGES - 1) & 1);
            unsigned char* st = smem + s * STAGE_BYTES;
            mbar_arrive_expect_tx(&full[s], A_BYTES + BK * WIDTH * 2);
            tma_load_2d(st, &tma_a, &full[s], kt * BK, tm * BM);
#pragma unroll
            for (int p = 0; p < WIDTH / 64; ++p) tma_load_2d(st + A_BYTES + p * B_PANEL, &tma_b, &full[s], tn * WIDTH + p * 64, kt * BK);
        }
    }
}

// After each lane of a warp has stored its partial sums: counts the warp's arrival on `arrivals`; true for the last of
// `splits` (which zeroes the counter for the next launch and may then read every slice's partials).
__device__ __forceinline__ bool last_arrival(unsigned int* arrivals, int splits) {
    __threadfence();  // this lane's partial is visible device-wide before its warp's arrival is counted
    __syncwarp();
    unsigned int before = 0;
    if (threadIdx.x % 32 == 0) before = atomicAdd(arrivals, 1u);
    if (__shfl_sync(0xffffffffu, before, 0) != (unsigned int)splits - 1) return false;
    __threadfence();
    if (threadIdx.x % 32 == 0) *arrivals = 0;
    return true;
}

// A consumer warp's part of a fix-up through a workspace (09's stream-K segments): store its partial 16 x WIDTH rows
// to plane z of W (M x N floats a plane) and count its arrival; true for the warp that arrives last of `parts`.
template <int WIDTH>
__device__ __forceinline__ bool arrives_last(const float (&acc)[WIDTH / 2], float* W, unsigned int* arrivals, int parts, int z, int M,
                                             int N, int row0, int col0) {
    store_acc<WIDTH>(acc, W + z * ((size_t)M * N), M, N, row0, col0);
    return last_arrival(arrivals, parts);
}

// Split-K fix-up, per consumer warp: store this slice's partial 16 x WIDTH rows to plane z of W (M x N floats a plane),
// count the arrival; the warp that arrives last sums all `splits` planes in z order (the same sum whichever slice
// came last) into acc, zeroes the counter for the next launch and returns true: it stores C.
template <int WIDTH>
__device__ __forceinline__ bool last_split_sums(float (&acc)[WIDTH / 2], float* W, unsigned int* arrivals, int splits, int z,
                                                int M, int N, int row0, int col0) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const size_t plane = (size_t)M * N;
    store_acc<WIDTH>(acc, W + z * plane, M, N, row0, col0);
    if (!last_arrival(arrivals, splits)) return false;
#pragma unroll
    for (int i = 0; i < WIDTH / 2; ++i) acc[i] = 0.0f;
    // A plane a round trip, a lane's WIDTH / 4 loads (WIDTH <= 128) issued together: a loop over planes inside each
    // element made every load its own dependent L2 round trip (08 ran 2-7x slower than 07 on the first H100 run).
    // Through L2 (ld.cg): other SMs wrote them.
#pragma unroll 1
    for (int p = 0; p < splits; ++p) {
        const float* part = W + p * plane;
#pragma unroll
        for (int j = 0; j < WIDTH / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + warp * 16 + lane / 4 + 8 * h, c = col0 + j * 8 + 2 * (lane % 4);
                if (r < M && c < N) {
                    const float2 v = __ldcg(reinterpret_cast<const float2*>(part + (size_t)r * N + c));
                    acc[4 * j + 2 * h] += v.x;
                    acc[4 * j + 2 * h + 1] += v.y;
                }
            }
    }
    return true;
}

// Consumer warpgroup c (0 or 1; threads 128-383): its 64 rows of every unit, then C (or, split, the fix-up first).
template <typename T, bool KEEP_ONE_IN_FLIGHT, int WIDTH, bool SPLIT>
__device__ __forceinline__ void consume(const Walk& w, const unsigned char* smem, uint64_t* full, uint64_t* empty,
                                        float* __restrict__ C, float* W, unsigned int* arrivals, int M, int N, int c) {
    int it = 0;
#pragma unroll 1
    for (int u = blockIdx.x; u < w.units<SPLIT>(); u += gridDim.x) {
        int t, tm, tn, z, k0, k1;
        w.unit<SPLIT>(u, t, tm, tn, z, k0, k1);
        float acc[WIDTH / 2] = {};
#pragma unroll 1
        for (int kt = k0; kt < k1; ++kt, ++it) {
            const int s = it % STAGES;
            mbar_wait(&full[s], (it / STAGES) & 1);
            const unsigned char* st = smem + s * STAGE_BYTES;
            wgmma_k_tile<WIDTH, BK, T>(acc, st + c * 64 * 128, st + A_BYTES, B_PANEL);
            if constexpr (KEEP_ONE_IN_FLIGHT) {  // kt's group stays pending; kt-1's is done: release its stage
                wgmma_wait<1>();
                if (kt > k0) mbar_arrive(&empty[(it - 1) % STAGES]);
            } else {  // wait for kt's group, then release its stage
                wgmma_wait<0>();
                fence_acc(acc);
                mbar_arrive(&empty[s]);
            }
        }
        if constexpr (KEEP_ONE_IN_FLIGHT) {
            wgmma_wait<0>();
            fence_acc(acc);
            mbar_arrive(&empty[(it - 1) % STAGES]);
        }
        if constexpr (SPLIT) {
            if (w.splits > 1 && !last_split_sums<WIDTH>(acc, W, &arrivals[t * WARPS_PER_TILE + c * 4 + threadIdx.x % 128 / 32],
                                                     w.splits, z, M, N, tm * BM + c * 64, tn * WIDTH))
                continue;
        }
        store_acc<WIDTH>(acc, C, M, N, tm * BM + c * 64, tn * WIDTH);
    }
}

// Stages 04 and 05: 128 x 256 tiles, whole K each. Called by a __global__ whose tensor maps are __grid_constant__
// parameters: TMA reads them where they are.
template <typename T, bool KEEP_ONE_IN_FLIGHT>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const Walk w{(M + BM - 1) / BM, (N + BN - 1) / BN, (K + BK - 1) / BK, 1};  // not cdiv(): 04 and 05 keep their CUBINs

    if (tid == 0) {
        ring_init<STAGES>(full, empty, 256);  // every consumer thread: each one's wgmma_wait covers only its own warp
    }
    __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) produce<BN, false>(tma_a, tma_b, w, smem, full, empty);
    } else {
        setmaxnreg_inc<232>();
        consume<T, KEEP_ONE_IN_FLIGHT, BN, false>(w, smem, full, empty, C, nullptr, nullptr, M, N, wg - 1);
    }
}

struct Plan {
    int bn, splits;
};

// The estimated k-tile times of an M x N x K product in tiles `bn` columns wide, each tile's K in `s` slices, on
// `ctas` persistent blocks, or -1 where that plan may not run: waves x (k tiles a unit + fix-up) x (bn + 32), the 32
// standing for what a k tile costs whatever its width (A's box, barriers, the wgmma issue). K is split only while
// the tiles alone leave blocks idle, and only in tiles of 128 or 64 columns: a 256-column consumer holds 128
// accumulators, and with the fix-up's pointers and slice bookkeeping live beside them it spilled. A compute-bound
// model: it mispredicts where reading B from DRAM is the bound (16 x 14336 x 4096 on the H100: 05's 56 tiles of
// 256 columns beat 07's 112 of 128, 97 % of cuBLAS against 74-75 %).
__device__ __forceinline__ long long plan_cost(int M, int N, int K, int ctas, int max_splits, int bn, int s) {
    const int tiles = cdiv(M, BM) * cdiv(N, bn), KT = cdiv(K, BK);
    if (s > max_splits || s > KT || (s > 1 && (bn == BN || tiles >= ctas || tiles > ARRIVALS / WARPS_PER_TILE))) return -1;
    // Fix-up, in k-tile times: the last slice writes its partial rows and reads all s back (rows: those of C the
    // tile holds), against a k tile's (BM + bn) x BK 16-bit loads; plus one for the fences and the count.
    const int rows = min(M, BM), fixup = s > 1 ? 1 + cdiv((1 + s) * rows * bn * 2, (BM + bn) * BK) : 0;
    return (long long)cdiv(tiles * s, ctas) * (cdiv(KT, s) + fixup) * (bn + 32);
}

// Over one whole warp: the lane holding the lowest `cost` (ties: the lower lane).
__device__ __forceinline__ int cheapest_lane(long long cost) {
    int best = threadIdx.x % 32;
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        const long long other = __shfl_xor_sync(0xffffffffu, cost, offset);
        const int other_lane = __shfl_xor_sync(0xffffffffu, best, offset);
        if (other < cost || (other == cost && other_lane < best)) {
            cost = other;
            best = other_lane;
        }
    }
    return best;
}

// The cheapest plan, by one whole warp: lane l costs width 256 >> (l / 4) with 1 << (l % 4) slices (lanes 0-11),
// and the warp keeps the lowest cost, ties to the lower lane (the wider tile, then fewer slices). Every block
// thread working through all twelve candidates itself cost 08 about 2 us before its first load (its candidate
// loop held 7 integer divisions against 07's 3, each a chain of dependent instructions).
__device__ __forceinline__ Plan plan_for(int M, int N, int K, int ctas, int max_splits) {
    const int lane = threadIdx.x % 32;
    const long long mine = lane < 12 ? plan_cost(M, N, K, ctas, max_splits, BN >> (lane / 4), 1 << (lane % 4)) : -1;
    const int best = cheapest_lane(mine < 0 ? 0x7fffffffffffffffLL : mine);  // lane 0's (BN, 1) always runs
    return Plan{BN >> (best / 4), 1 << (best % 4)};
}

// Stages 07 (MAX_SPLITS 1) and 08: 05's pipeline on the tile width and K slices plan_for picks for this shape and
// grid. W: MAX_SPLITS planes of M x N floats; arrivals: ARRIVALS counters, zero
// at the launch (both unused when MAX_SPLITS is 1).
template <typename T, int MAX_SPLITS>
__device__ __forceinline__ void run_per_shape(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, float* W,
                                              unsigned int* arrivals, int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    constexpr bool SPLIT = MAX_SPLITS > 1;
    __shared__ Plan planned;
    const int tid = threadIdx.x, wg = tid / 128;
    if (tid < 32) {  // warp 0 plans; the block reads the plan after the barrier
        const Plan p = plan_for(M, N, K, gridDim.x, MAX_SPLITS);
        if (tid == 0) {
            planned = p;
            ring_init<STAGES>(full, empty, 256);
        }
    }
    __syncthreads();
    const Plan plan = planned;
    const Walk w{cdiv(M, BM), cdiv(N, plan.bn), cdiv(K, BK), plan.splits};

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            if (SPLIT && plan.splits > 1) {  // 128 or 64 columns (plan_for)
                if (plan.bn == 128) produce<128, SPLIT>(tma_a, tma_b, w, smem, full, empty);
                else produce<64, SPLIT>(tma_a, tma_b, w, smem, full, empty);
            } else {  // whole K: 07's code
                if (plan.bn == 256) produce<256, false>(tma_a, tma_b, w, smem, full, empty);
                else if (plan.bn == 128) produce<128, false>(tma_a, tma_b, w, smem, full, empty);
                else produce<64, false>(tma_a, tma_b, w, smem, full, empty);
            }
        }
    } else {
        setmaxnreg_inc<232>();
        if (SPLIT && plan.splits > 1) {  // 128 or 64 columns (plan_for)
            if (plan.bn == 128) consume<T, true, 128, SPLIT>(w, smem, full, empty, C, W, arrivals, M, N, wg - 1);
            else consume<T, true, 64, SPLIT>(w, smem, full, empty, C, W, arrivals, M, N, wg - 1);
        } else {  // whole K: 07's code
            if (plan.bn == 256) consume<T, true, 256, false>(w, smem, full, empty, C, nullptr, nullptr, M, N, wg - 1);
            else if (plan.bn == 128) consume<T, true, 128, false>(w, smem, full, empty, C, nullptr, nullptr, M, N, wg - 1);
            else consume<T, true, 64, false>(w, smem, full, empty, C, nullptr, nullptr, M, N, wg - 1);
        }
    }
}
}  // namespace persistent_ws
