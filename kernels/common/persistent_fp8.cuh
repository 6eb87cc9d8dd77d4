// Walk F's persistent warp-specialized FP8 kernel, the body of stages 02 (persistent_fp8), 03 (mma_overlap_fp8) and
// 04 (multicast_fp8): walk D's persistent_ws / 06 pipeline on 01's FP8 tile. One block (or one cluster of CLUSTER
// blocks) per SM walks 128 x 256 tiles of C in grouped order (GROUP tile rows at a time, down the rows first);
// warpgroup 0's first thread loads each 128-byte-deep k tile of A (128 rows) and B (256 rows, N x K) with TMA into a
// STAGES-deep ring; warpgroups 1 and 2 each multiply 64 rows of it with wgmma m64n256k32 and store their
// accumulators times scale_a * scale_b, while the producer already fills the ring with the next tile's k tiles.
//   KEEP_ONE_IN_FLIGHT false (02): wait for k tile kt's wgmmas (wait_group 0), release its stage.
//   KEEP_ONE_IN_FLIGHT true  (03, 04): issue kt, wait until only kt's group is pending (wait_group 1), release
//                                      kt-1's stage: the tensor pipe always holds the next group.
//   CLUSTER 2 (04): the cluster's two CTAs take vertically adjacent tiles (same B rows); k tile kt's B box is loaded
//                   once, by the CTA of rank kt % 2, and TMA-multicast into both; each stage is released on both
//                   CTAs' empty barriers, since either CTA's producer may refill it in both.
// A stage's empty barrier counts one arrival per consumer warp (of every CTA of the cluster). The ring's stage and
// phase counters run on across tiles. N % 8 == 0, K % 16 == 0, any M (rows past M arrive as zeros, are not stored).
#pragma once
#include "hopper_fp8.cuh"

namespace persistent_fp8 {
// Enumerators: the stages' .cu files declare no geometry of their own but CLUSTER (kernels/sources.py reads these).
enum : int {
    BM = 128,
    BN = 256,
    BK = 128,  // bytes of K a k tile: 128 FP8 elements, one 128-byte swizzle row
    STAGES = 4,
    THREADS = 384,
    GROUP = 16,  // tile rows a group: 16 A strips (2 MB at K = 8192) beside ~8 B strips (2 MB each) fit the 50 MB L2
    A_BYTES = BM * BK,
    STAGE_BYTES = A_BYTES + BN * BK,
    SMEM_BYTES = STAGES * STAGE_BYTES,  // dynamic
    WARPS = 8,  // consumer warps a CTA
};

__device__ __forceinline__ int cdiv(int a, int b) { return (a + b - 1) / b; }

// One consumer warp is done with a stage: once its wgmma_wait has returned on every lane, lane i arrives on the
// stage's empty barrier in cluster CTA i.
template <int CLUSTER>
__device__ __forceinline__ void release(uint64_t* empty) {
    __syncwarp();
    const int lane = threadIdx.x % 32;
    if constexpr (CLUSTER == 1) {
        if (lane == 0) mbar_arrive(empty);
    } else {
        if (lane < CLUSTER) mbar_arrive_at(empty, lane);
    }
}

// Unit u of the walk -> the first row of this CTA's tile and the tile's first column. A unit is CLUSTER vertically
// adjacent tiles; CTA `rank` takes the rank-th.
template <int CLUSTER>
__device__ __forceinline__ void unit_tile(int u, int units_m, int tiles_n, uint32_t rank, int& row0, int& col0) {
    int um, tn;
    grouped_tile<GROUP / CLUSTER>(u, units_m, tiles_n, um, tn);
    row0 = (um * CLUSTER + (int)rank) * BM;
    col0 = tn * BN;
}

template <bool KEEP_ONE_IN_FLIGHT, int CLUSTER>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, const float* scale_a,
                                    const float* scale_b, int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const uint32_t rank = CLUSTER > 1 ? cluster_rank() : 0;
    const int units_m = cdiv(M, CLUSTER * BM), tiles_n = cdiv(N, BN), KT = cdiv(K, BK);
    const int units = units_m * tiles_n, first = blockIdx.x / CLUSTER, step = gridDim.x / CLUSTER;

    if (tid == 0) ring_init<STAGES>(full, empty, CLUSTER * WARPS);
    if constexpr (CLUSTER > 1) cluster_sync();  // the peer's barriers are initialised before anyone arrives on them
    else __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int it = 0;
#pragma unroll 1
            for (int u = first; u < units; u += step) {
                int row0, col0;
                unit_tile<CLUSTER>(u, units_m, tiles_n, rank, row0, col0);
#pragma unroll 1
                for (int kt = 0; kt < KT; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbar_wait(&empty[s], (it / STAGES - 1) & 1);
                    unsigned char* st = smem + s * STAGE_BYTES;
                    mbar_arrive_expect_tx(&full[s], STAGE_BYTES);  // own A box + the B box, from whichever CTA loads it
                    tma_load_2d(st, &tma_a, &full[s], kt * BK, row0);
                    if constexpr (CLUSTER == 1) tma_load_2d(st + A_BYTES, &tma_b, &full[s], kt * BK, col0);
                    else if (kt % CLUSTER == (int)rank)
                        tma_load_2d_multicast(st + A_BYTES, &tma_b, &full[s], kt * BK, col0, (1 << CLUSTER) - 1);
                }
            }
        }
        __syncwarp();
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        int it = 0;
#pragma unroll 1
        for (int u = first; u < units; u += step) {
            int row0, col0;
            unit_tile<CLUSTER>(u, units_m, tiles_n, rank, row0, col0);
            float acc[BN / 2] = {};
#pragma unroll 1
            for (int kt = 0; kt < KT; ++kt, ++it) {
                const int s = it % STAGES;
                mbar_wait(&full[s], (it / STAGES) & 1);
                const unsigned char* st = smem + s * STAGE_BYTES;
                wgmma_fp8_k_tile<BN, BK>(acc, st + c * 64 * BK, st + A_BYTES);
                if constexpr (KEEP_ONE_IN_FLIGHT) {  // kt's group stays pending; kt-1's is done: release its stage
                    wgmma_wait<1>();
                    if (kt > 0) release<CLUSTER>(&empty[(it - 1) % STAGES]);
                } else {  // wait for kt's group, then release its stage
                    wgmma_wait<0>();
                    fence_acc(acc);
                    release<CLUSTER>(&empty[s]);
                }
            }
            if constexpr (KEEP_ONE_IN_FLIGHT) {
                wgmma_wait<0>();
                fence_acc(acc);
                release<CLUSTER>(&empty[(it - 1) % STAGES]);
            }
            dequantise(acc, scale_a, scale_b);
            store_acc<BN>(acc, C, M, N, row0 + c * 64, col0);
        }
    }
    if constexpr (CLUSTER > 1) cluster_sync();  // no CTA exits while its peer may still write to its shared memory
}
}  // namespace persistent_fp8
