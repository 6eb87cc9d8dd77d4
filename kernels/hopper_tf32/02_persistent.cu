// 02 persistent: 01 launched once per SM, each block walking the output tiles blockIdx.x,
// + gridDim.x, ... in grouped order (walk D 04): 8 tile rows (2048 rows of A, as walk D's 16 rows
// of 128) at a time, down the rows first, so the 132 resident tiles share 8 A strips and about 17
// B strips instead of 01's launch order, which at 8192^3 (32 x 64 tiles) spreads them over 3 tile
// rows and every one of 64 tile columns: all of B (268 MB of FP32, five L2s) streamed again each
// wave. The producer starts the next tile's loads while the consumers store C, hiding each
// tile's prologue and epilogue. Stage and phase counters run on across tiles.
// N % 4 == 0, K % 4 == 0, any M.
#include "hopper_tf32.cuh"

namespace t02 {
constexpr int BM = 256, BN = 128, BK = tf32h::KBOX, STAGES = 4, THREADS = 384, GROUP = 8;
constexpr int A_BYTES = BM * BK * 4, STAGE_BYTES = A_BYTES + BK * BN * 4;
}  // namespace t02

extern "C" __global__ void __launch_bounds__(t02::THREADS, 1)
tf32_persistent(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    using namespace t02;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, KT = (K + BK - 1) / BK;

    if (tid == 0) {
        ring_init<STAGES>(full, empty, 256);
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
                    mbar_arrive_expect_tx(&full[s], STAGE_BYTES);
                    tma_load_stage<BN>(smem + s * STAGE_BYTES, A_BYTES, tma_a, tma_b, &full[s], tm * BM, tn * BN, kt * BK);
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
            float acc[BM / 2] = {};
#pragma unroll 1
            for (int kt = 0; kt < KT; ++kt, ++it) {
                const int s = it % STAGES;
                mbar_wait(&full[s], (it / STAGES) & 1);
                const unsigned char* st = smem + s * STAGE_BYTES;
                wgmma_tf32_k_tile<BM>(acc, st, st + A_BYTES, c * 64);
                wgmma_wait<0>();
                fence_acc(acc);
                mbar_arrive(&empty[s]);
            }
            store_acc_t<BM>(acc, C, M, N, tm * BM, tn * BN + c * 64);
        }
    }
}
