// Walk D's persistent warp-specialized 128x256 kernel, the body of stages 04 (persistent) and 05
// (mma_overlap), which differ only in when a consumer releases a stage (KEEP_ONE_IN_FLIGHT):
// one block per SM loops over the output tiles in grouped order (grouped_tile); warpgroup 0's
// first thread loads each k tile of A and B with TMA into a STAGES-deep ring of shared memory;
// warpgroups 1 and 2 each multiply 64 rows of it with wgmma and store their accumulators.
//   KEEP_ONE_IN_FLIGHT false (04): wait for k tile kt's wgmmas (wait_group 0), release its stage.
//   KEEP_ONE_IN_FLIGHT true  (05): issue kt, wait until only kt's group is pending (wait_group 1),
//                                  release kt-1's stage: the tensor pipe always holds the next group.
// The stage/phase counters run on across tiles. N % 8 == 0, K % 8 == 0, any M.
#pragma once
#include "hopper.cuh"

namespace persistent_ws {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 384, GROUP = 16;
constexpr int A_BYTES = BM * BK * 2, B_PANEL = BK * 128, STAGE_BYTES = A_BYTES + BK * BN * 2;
enum : int { SMEM_BYTES = STAGES * STAGE_BYTES };  // dynamic

// Called by a __global__ whose tensor maps are __grid_constant__ parameters: TMA reads them where they are.
template <typename T, bool KEEP_ONE_IN_FLIGHT>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, KT = (K + BK - 1) / BK;

    if (tid == 0) {
        ring_init<STAGES>(full, empty, 256);  // every consumer thread: each one's wgmma_wait covers only its own warp
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
                wgmma_k_tile<BN, BK, T>(acc, st + c * 64 * 128, st + A_BYTES, B_PANEL);
                if constexpr (KEEP_ONE_IN_FLIGHT) {  // kt's group stays pending; kt-1's is done: release its stage
                    wgmma_wait<1>();
                    if (kt > 0) mbar_arrive(&empty[(it - 1) % STAGES]);
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
            store_acc<BN>(acc, C, M, N, tm * BM + c * 64, tn * BN);
        }
    }
}
}  // namespace persistent_ws
