// Walk F's split-K pipeline, the body of stages 05 (split_k_fp8) and, above its swap range, 06 (swap_ab_fp8): 03's
// persistent 128 x 256 tiles (persistent_fp8.cuh) with each tile's K cut into S slices while the tiles alone leave
// blocks idle. Every block works out the same plan from the shape and the grid: S is 1 while the tiles fill the
// blocks, else as many as the idle blocks allow (at most the launch's max_splits and the tile's k tiles); the
// persistent grid walks tile-slice units, a tile's slices side by side. Each consumer warp stores its slice's scaled
// partial 16 x 256 rows to plane z of the workspace W and counts its arrival on a per-(tile, warp) counter; the warp
// that arrives last adds the S planes in slice order (the same sum whichever slice came last), 64 columns at a time,
// each plane's 16 loads a lane issued together (walk D's 08 lost 2-7x looping over planes in each element), stores C
// and zeroes its counter (the caller's module memory, zero at its load) for the next launch.
// TMA boxes of A_BOX rows of A and B_BOX of B (05: the whole tile; 06: its swapped path's small boxes).
// N % 8 == 0, K % 16 == 0, any M.
#pragma once
#include "persistent_fp8.cuh"

namespace split_k_fp8 {
enum : int { ARRIVALS = 8 * 1024, CHUNK = 64 };  // split tiles at most ARRIVALS / WARPS; columns a fix-up pass sums

// K slices a tile: 1 while the tiles fill the blocks, else as many as the idle blocks allow (at most max_splits and KT).
__device__ __forceinline__ int slices_for(int tiles, int KT, int ctas, int max_splits) {
    if (tiles >= ctas || tiles > ARRIVALS / persistent_fp8::WARPS) return 1;
    return max(1, min(min(max_splits, KT), ctas / tiles));
}

// Unit u -> the tile's first row and column (grouped order), and the unit's k tiles [k0, k1).
__device__ __forceinline__ void split_unit(int u, int splits, int tiles_m, int tiles_n, int KT, int& t, int& z, int& row0,
                                           int& col0, int& k0, int& k1) {
    t = u / splits;
    z = u % splits;
    persistent_fp8::unit_tile<1>(t, tiles_m, tiles_n, 0, row0, col0);
    k0 = z * KT / splits;
    k1 = (z + 1) * KT / splits;
}

// A consumer warp has stored its partial: count its arrival (after a device-wide fence); true for the warp that
// arrives last of `splits`, which has zeroed the counter for the next launch.
__device__ __forceinline__ bool last_arrival(unsigned int* arrival, int splits) {
    const int lane = threadIdx.x % 32;
    __threadfence();  // this lane's partial is visible device-wide before its warp's arrival is counted
    __syncwarp();
    unsigned int before = 0;
    if (lane == 0) before = atomicAdd(arrival, 1u);
    if (__shfl_sync(0xffffffffu, before, 0) != (unsigned int)splits - 1) return false;
    __threadfence();
    if (lane == 0) *arrival = 0;
    return true;
}

// One consumer warp's 16 x BN rows of a split tile: store the slice's partial to plane z of W, count the arrival; the
// warp that arrives last sums all planes in z order into C and zeroes the counter.
__device__ __forceinline__ void split_fixup(const float (&acc)[persistent_fp8::BN / 2], float* W, unsigned int* arrival, int splits,
                                            int z, float* __restrict__ C, int M, int N, int row0, int col0) {
    using namespace persistent_fp8;
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const size_t plane = (size_t)M * N;
    store_acc<BN>(acc, W + z * plane, M, N, row0, col0);
    if (!last_arrival(arrival, splits)) return;
#pragma unroll 1
    for (int c0 = 0; c0 < BN; c0 += CHUNK) {
        float sum[CHUNK / 2] = {};  // this lane's 2 rows x CHUNK / 8 column pairs of the warp's 16 x CHUNK
#pragma unroll 1
        for (int p = 0; p < splits; ++p) {
            const float* part = W + p * plane;
#pragma unroll
            for (int j = 0; j < CHUNK / 8; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int r = row0 + warp * 16 + lane / 4 + 8 * h, c = col0 + c0 + j * 8 + 2 * (lane % 4);
                    if (r < M && c < N) {  // through L2 (ld.cg): other SMs wrote them
                        const float2 v = __ldcg(reinterpret_cast<const float2*>(part + (size_t)r * N + c));
                        sum[4 * j + 2 * h] += v.x;
                        sum[4 * j + 2 * h + 1] += v.y;
                    }
                }
        }
#pragma unroll
        for (int j = 0; j < CHUNK / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + warp * 16 + lane / 4 + 8 * h, c = col0 + c0 + j * 8 + 2 * (lane % 4);
                if (r < M && c < N) *reinterpret_cast<float2*>(C + (size_t)r * N + c) = make_float2(sum[4 * j + 2 * h], sum[4 * j + 2 * h + 1]);
            }
    }
}

// The block: warpgroup 0's first thread loads, warpgroups 1 and 2 multiply, store (split: the fix-up first).
// `arrivals`: ARRIVALS counters of the caller's module, zero at the launch. DEPENDENT (10): walk D 15's launch.
template <int A_BOX, int B_BOX, bool DEPENDENT = false>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, float* W, unsigned int* arrivals,
                                    const float* scale_a, const float* scale_b, int M, int N, int K, int max_splits) {
    using namespace persistent_fp8;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const int tiles_m = cdiv(M, BM), tiles_n = cdiv(N, BN), KT = cdiv(K, BK);
    const int splits = slices_for(tiles_m * tiles_n, KT, gridDim.x, max_splits), units = tiles_m * tiles_n * splits;

    if (tid == 0) ring_init<STAGES>(full, empty, WARPS);
    __syncthreads();
    after_setup<DEPENDENT>();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int it = 0;
#pragma unroll 1
            for (int u = blockIdx.x; u < units; u += gridDim.x) {
                int t, z, row0, col0, k0, k1;
                split_unit(u, splits, tiles_m, tiles_n, KT, t, z, row0, col0, k0, k1);
#pragma unroll 1
                for (int kt = k0; kt < k1; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbar_wait(&empty[s], (it / STAGES - 1) & 1);
                    unsigned char* st = smem + s * STAGE_BYTES;
                    mbar_arrive_expect_tx(&full[s], STAGE_BYTES);
#pragma unroll
                    for (int q = 0; q < BM / A_BOX; ++q) tma_load_2d(st + q * A_BOX * BK, &tma_a, &full[s], kt * BK, row0 + q * A_BOX);
#pragma unroll
                    for (int q = 0; q < BN / B_BOX; ++q)
                        tma_load_2d(st + A_BYTES + q * B_BOX * BK, &tma_b, &full[s], kt * BK, col0 + q * B_BOX);
                }
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        int it = 0;
#pragma unroll 1
        for (int u = blockIdx.x; u < units; u += gridDim.x) {
            int t, z, row0, col0, k0, k1;
            split_unit(u, splits, tiles_m, tiles_n, KT, t, z, row0, col0, k0, k1);
            float acc[BN / 2] = {};
#pragma unroll 1
            for (int kt = k0; kt < k1; ++kt, ++it) {
                const int s = it % STAGES;
                mbar_wait(&full[s], (it / STAGES) & 1);
                const unsigned char* st = smem + s * STAGE_BYTES;
                wgmma_fp8_k_tile<BN, BK>(acc, st + c * 64 * BK, st + A_BYTES);
                wgmma_wait<1>();  // kt's group stays pending; kt-1's is done: release its stage
                if (kt > k0) release<1>(&empty[(it - 1) % STAGES]);
            }
            wgmma_wait<0>();
            fence_acc(acc);
            release<1>(&empty[(it - 1) % STAGES]);
            dequantise(acc, scale_a, scale_b);
            if (splits > 1)
                split_fixup(acc, W, &arrivals[t * WARPS + c * 4 + tid % 128 / 32], splits, z, C, M, N, row0 + c * 64, col0);
            else
                store_acc<BN>(acc, C, M, N, row0 + c * 64, col0);
        }
    }
}
}  // namespace split_k_fp8
