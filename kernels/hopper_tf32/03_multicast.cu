// 03 multicast: 02 in clusters of 2 CTAs on vertically adjacent tiles (tile rows 2p and 2p+1, same
// columns), which need the same B tile (walk D 06). Each CTA's producer loads its own A box
// and two of the four 32-column B panels, multicast by TMA into both CTAs' shared memory: L2 -> SM
// traffic per k tile drops from 48 KB to 40 KB a CTA (B is the smaller operand: A's 256 rows are
// the tile's long side). A stage may be refilled only when both CTAs' consumers are done
// with it, since the peer's multicast writes it too: each consumer warp arrives on the "empty"
// barrier of both CTAs. Both CTAs walk the same tile pairs in lockstep; a
// pair's second row past M loads zeros and stores nothing. Cluster barriers at start (peer barriers
// initialised) and end (no CTA exits while its peer may write to it).
// N % 4 == 0, K % 4 == 0, any M.
#include "hopper_tf32.cuh"

namespace t03 {
constexpr int BM = 256, BN = 128, BK = tf32h::KBOX, STAGES = 4, THREADS = 384, GROUP = 4, CLUSTER = 2;
constexpr int A_BYTES = BM * BK * 4, STAGE_BYTES = A_BYTES + BK * BN * 4, PANELS = BN / tf32h::KBOX;
enum : int { SMEM_BYTES = STAGES * STAGE_BYTES };  // dynamic
}  // namespace t03

extern "C" __global__ void __cluster_dims__(t03::CLUSTER, 1, 1) __launch_bounds__(t03::THREADS, 1)
tf32_multicast(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    using namespace t03;
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
                    for (int p = rank * (PANELS / CLUSTER); p < (rank + 1) * (PANELS / CLUSTER); ++p)
                        tma_load_2d_multicast(st + A_BYTES + p * tf32h::PANEL_BYTES, &tma_b, &full[s], tn * BN + p * tf32h::KBOX, kt * BK,
                                              (1 << CLUSTER) - 1);
                }
            }
        }
        __syncwarp();
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        int it = 0;
#pragma unroll 1
        for (int u = cluster; u < units; u += clusters) {
            int pm, tn;
            grouped_tile<GROUP>(u, pairs_m, tiles_n, pm, tn);
            float acc[BM / 2] = {};
#pragma unroll 1
            for (int kt = 0; kt < KT; ++kt, ++it) {
                const int s = it % STAGES;
                mbar_wait(&full[s], (it / STAGES) & 1);
                const unsigned char* st = smem + s * STAGE_BYTES;
                wgmma_tf32_k_tile<BM>(acc, st, st + A_BYTES, c * 64);
                wgmma_wait<0>();
                fence_acc(acc);
                __syncwarp();
                if (tid % 32 < CLUSTER) mbar_arrive_at(&empty[s], tid % 32);  // lane i arrives at CTA i
            }
            store_acc_t<BM>(acc, C, M, N, (pm * CLUSTER + rank) * BM, tn * BN + c * 64);
        }
    }
    cluster_sync();
}
