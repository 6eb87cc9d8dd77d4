// PROBE (walkd15 call 1, not a stage yet): 64 x 128 tiles (cuBLAS's 128x64 tile of C^T, read in our row-major terms),
// one consumer warpgroup of m64n128k16, a 9-deep ring of 24 KB stages; CLUSTER 2: the two CTAs of a cluster take
// vertically adjacent 64-row tiles of the same 128 columns and each loads one 64-column half of B multicast to both.
// The empty barriers count one arrival per consumer warp of each CTA of the cluster. griddepcontrol: the producer
// waits for the previous grid (programmatic dependent launch) before its first load; every thread lets the next grid
// launch once the setup is done.
#pragma once
#include "hopper.cuh"

namespace row_pairs {
enum : int {
    BM = 64, BN = 128, BK = 64, THREADS = 256, GROUP = 16,
    A_BYTES = BM * BK * 2, B_PANEL = BK * 128, STAGE = A_BYTES + BK * BN * 2, STAGES = 9,
    SMEM_BYTES = STAGES * STAGE,
};

__device__ __forceinline__ int cdiv(int a, int b) { return (a + b - 1) / b; }
__device__ __forceinline__ void grid_dependency_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ void launch_dependents() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

template <typename T, int CLUSTER>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32;
    const uint32_t rank = CLUSTER > 1 ? cluster_rank() : 0;
    const int tiles_n = cdiv(N, BN), rows = cdiv(M, CLUSTER * BM), KT = cdiv(K, BK);
    const int units = rows * tiles_n, cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    if (tid == 0) {
        prefetch_tensormap(tma_a);
        prefetch_tensormap(tma_b);
        ring_init<STAGES>(full, empty, CLUSTER * 4);  // one arrival per consumer warp of each CTA
    }
    if constexpr (CLUSTER > 1) cluster_sync();
    else __syncthreads();
    launch_dependents();
    if (wg == 0) {
        if (tid == 0) {
            grid_dependency_wait();
            int it = 0;
#pragma unroll 1
            for (int u = cluster; u < units; u += clusters) {
                int pm, tn;
                grouped_tile<GROUP>(u, rows, tiles_n, pm, tn);
                const int row0 = (pm * CLUSTER + rank) * BM;
#pragma unroll 1
                for (int kt = 0; kt < KT; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbar_wait(&empty[s], (it / STAGES - 1) & 1);
                    unsigned char* st = smem + s * STAGE;
                    mbar_arrive_expect_tx(&full[s], STAGE);
                    tma_load_2d(st, &tma_a, &full[s], kt * BK, row0);
                    if constexpr (CLUSTER == 1) {
#pragma unroll
                        for (int p = 0; p < BN / 64; ++p) tma_load_2d(st + A_BYTES + p * B_PANEL, &tma_b, &full[s], tn * BN + p * 64, kt * BK);
                    } else {
                        tma_load_2d_multicast(st + A_BYTES + rank * B_PANEL, &tma_b, &full[s], tn * BN + rank * 64, kt * BK, 3);
                    }
                }
            }
        }
        __syncwarp();
    } else {
        int it = 0;
        auto release = [&](int s) {
            __syncwarp();
            if constexpr (CLUSTER == 1) {
                if (lane == 0) mbar_arrive(&empty[s]);
            } else {
                if (lane < CLUSTER) mbar_arrive_at(&empty[s], lane);  // lane i arrives at CTA i
            }
        };
#pragma unroll 1
        for (int u = cluster; u < units; u += clusters) {
            int pm, tn;
            grouped_tile<GROUP>(u, rows, tiles_n, pm, tn);
            float acc[BN / 2] = {};
#pragma unroll 1
            for (int kt = 0; kt < KT; ++kt, ++it) {
                const int s = it % STAGES;
                mbar_wait(&full[s], (it / STAGES) & 1);
                const unsigned char* st = smem + s * STAGE;
                wgmma_k_tile<BN, BK, T>(acc, st, st + A_BYTES, B_PANEL);
                wgmma_wait<1>();
                if (kt > 0) release((it - 1) % STAGES);
            }
            wgmma_wait<0>();
            fence_acc(acc);
            release((it - 1) % STAGES);
            store_acc<BN>(acc, C, M, N, (pm * CLUSTER + rank) * BM, tn * BN);
        }
    }
    if constexpr (CLUSTER > 1) cluster_sync();
}
}  // namespace row_pairs
