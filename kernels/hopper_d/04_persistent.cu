// 04 persistent: 03's warp-specialized 128x256 kernel launched once per SM, each block
// walking tiles blockIdx.x, + gridDim.x, ... in a grouped order: 16 tile rows (2048
// rows of A) at a time, down the rows first. At 8192^3, 03's row-major launch order has
// the 132 resident tiles spanning 4 tile rows and all 32 tile columns, so every wave
// streams all of B (128 MB, more than the 50 MB L2) from DRAM; a 16 x ~8 patch needs
// 16 A strips (32 MB) and 8 B strips (32 MB). Persistence also hides each tile's
// prologue and epilogue: the producer starts the next tile's loads while the consumers
// store C. The stage/phase counters run on across tiles. N % 8 == 0, K % 8 == 0, any M.
#include "hopper.cuh"

namespace d04 {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 384, GROUP = 16;
constexpr int A_BYTES = BM * BK * 2, B_PANEL = BK * 128, STAGE_BYTES = A_BYTES + BK * BN * 2;

}  // namespace d04

template <typename T>
__global__ void __launch_bounds__(d04::THREADS, 1)
d_persistent(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    using namespace d04;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, KT = (K + BK - 1) / BK;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 256);  // every consumer thread: each one's wgmma_wait covers only its own warp
        }
        mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int it = 0;
#pragma unroll 1
            for (int t = blockIdx.x; t < tiles_m * tiles_n; t += gridDim.x) {
                int tm, tn;
                grouped_tile<GROUP>(t, tiles_m, tiles_n, tm, tn);
#pragma unroll 1
                for (int kt = 0; kt < KT; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbar_wait(&empty[s], (it / STAGES - 1) & 1);
                    unsigned char* st = smem + s * STAGE_BYTES;
                    mbar_arrive_expect_tx(&full[s], STAGE_BYTES);
                    tma_load_2d(st, &tma_a, &full[s], kt * BK, tm * BM);
#pragma unroll
                    for (int p = 0; p < BN / 64; ++p) tma_load_2d(st + A_BYTES + p * B_PANEL, &tma_b, &full[s], tn * BN + p * 64, kt * BK);
                }
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        int it = 0;
#pragma unroll 1
        for (int t = blockIdx.x; t < tiles_m * tiles_n; t += gridDim.x) {
            int tm, tn;
            grouped_tile<GROUP>(t, tiles_m, tiles_n, tm, tn);
            float acc[BN / 2] = {};
#pragma unroll 1
            for (int kt = 0; kt < KT; ++kt, ++it) {
                const int s = it % STAGES;
                mbar_wait(&full[s], (it / STAGES) & 1);
                const unsigned char* st = smem + s * STAGE_BYTES;
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < BK / 16; ++ks)
                    wgmma<BN, T>(acc, swizzled_desc(st + c * 64 * 128 + ks * 32, 16, 1024),
                                 swizzled_desc(st + A_BYTES + ks * 16 * 128, B_PANEL, 1024));
                wgmma_commit();
                wgmma_wait<0>();
                fence_acc(acc);
                mbar_arrive(&empty[s]);
            }
            store_acc<BN>(acc, C, M, N, tm * BM + c * 64, tn * BN);
        }
    }
}
