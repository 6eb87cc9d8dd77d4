// 06 multicast: 05 in clusters of 2 CTAs on vertically adjacent tiles (rows 2p, 2p+1),
// which need the same B strip. Each CTA's producer loads its own A box and half of the
// shared B tile (two of four 64-column panels), multicast by TMA into both CTAs' shared
// memory: L2 -> SM reads a k tile 48 -> 32 KB a CTA (ncu on 05: 12.5 GB through L2 at
// 8192^3, cuBLAS 8.8 GB). A stage is refilled only when both CTAs' consumers are done
// with it (the peer's multicast writes it too): each consumer warp arrives on the empty
// barrier of both CTAs (16 a phase). Both CTAs walk the tile pairs in lockstep; a second
// row past M loads zeros, stores nothing. Cluster barriers at start (peer barriers set
// up) and end (no CTA exits while its peer may write to it).
// N % 8 == 0, K % 8 == 0, any M.
#include "hopper.cuh"

namespace d06 {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 384, GROUP = 8, CLUSTER = 2;
constexpr int A_BYTES = BM * BK * 2, B_PANEL = BK * 128, STAGE_BYTES = A_BYTES + BK * BN * 2;
enum : int { SMEM_BYTES = STAGES * STAGE_BYTES };  // dynamic
}  // namespace d06

template <typename T>
__global__ void __cluster_dims__(d06::CLUSTER, 1, 1) __launch_bounds__(d06::THREADS, 1)
d_multicast(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    using namespace d06;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const uint32_t rank = cluster_rank();
    const int tiles_n = (N + BN - 1) / BN, pairs_m = (M + CLUSTER * BM - 1) / (CLUSTER * BM), KT = (K + BK - 1) / BK;
    const int units = pairs_m * tiles_n, cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;

    if (tid == 0) {
        ring_init<STAGES>(full, empty, CLUSTER * 8);  // each consumer warp of both CTAs
    }
    cluster_sync();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int it = 0;
#pragma unroll 1
            for (int u = cluster; u < units; u += clusters) {
                int pm, tn;
                grouped_tile<GROUP>(u, pairs_m, tiles_n, pm, tn);
#pragma unroll 1
                for (int kt = 0; kt < KT; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbar_wait(&empty[s], (it / STAGES - 1) & 1);
                    unsigned char* st = smem + s * STAGE_BYTES;
                    mbar_arrive_expect_tx(&full[s], STAGE_BYTES);  // own A box + all four B panels, two from the peer
                    tma_load_2d(st, &tma_a, &full[s], kt * BK, (pm * CLUSTER + rank) * BM);
#pragma unroll
                    for (int p = rank * 2; p < rank * 2 + 2; ++p)
                        tma_load_2d_multicast(st + A_BYTES + p * B_PANEL, &tma_b, &full[s], tn * BN + p * 64, kt * BK, (1 << CLUSTER) - 1);
                }
            }
        }
        __syncwarp();
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        int it = 0;
        auto release = [&](int s) {
            __syncwarp();
            if (tid % 32 < CLUSTER) mbar_arrive_at(&empty[s], tid % 32);  // lane i arrives at CTA i
        };
#pragma unroll 1
        for (int u = cluster; u < units; u += clusters) {
            int pm, tn;
            grouped_tile<GROUP>(u, pairs_m, tiles_n, pm, tn);
            float acc[BN / 2] = {};
#pragma unroll 1
            for (int kt = 0; kt < KT; ++kt, ++it) {
                const int s = it % STAGES;
                mbar_wait(&full[s], (it / STAGES) & 1);
                const unsigned char* st = smem + s * STAGE_BYTES;
                wgmma_k_tile<BN, BK, T>(acc, st + c * 64 * 128, st + A_BYTES, B_PANEL);
                wgmma_wait<1>();
                if (kt > 0) release((it - 1) % STAGES);
            }
            wgmma_wait<0>();
            fence_acc(acc);
            release((it - 1) % STAGES);
            store_acc<BN>(acc, C, M, N, (pm * CLUSTER + rank) * BM + c * 64, tn * BN);
        }
    }
    cluster_sync();
}
