// 01 warp_specialized: walk D 03's organisation for 00's TF32 product. A 256 (rows of C) x 128
// (columns) tile: a producer warpgroup whose one thread issues the TMA boxes (A 256 x 32, B four
// 32 x 32 panels: 48 KB a stage, 4 stages), and two consumer warpgroups, each 64 columns of C^T by
// all 256 rows with m64n256k8 (128 accumulators a thread). Full/empty mbarriers instead of a block
// barrier, so the producer runs up to 4 k tiles ahead; setmaxnreg moves registers from the producer
// (40) to the consumers (232). The tile's long side is A's (the descriptor operand, which both
// consumers read whole) because wgmma's N may reach 256 while each consumer's register operand is
// 64 columns of B: FP32 per byte loaded rises from 32 to 43 flops/byte.
// N % 4 == 0, K % 4 == 0, any M.
#include "hopper_tf32.cuh"

namespace t01 {
constexpr int BM = 256, BN = 128, BK = tf32h::KBOX, STAGES = 4, THREADS = 384;
constexpr int A_BYTES = BM * BK * 4, STAGE_BYTES = A_BYTES + BK * BN * 4;
}  // namespace t01

extern "C" __global__ void __launch_bounds__(t01::THREADS, 1)
tf32_warp_specialized(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    using namespace t01;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int KT = (K + BK - 1) / BK;

    if (tid == 0) {
        ring_init<STAGES>(full, empty, 256);  // every consumer thread: each one's wgmma_wait covers only its own warp
    }
    __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
#pragma unroll 1
            for (int kt = 0; kt < KT; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES) mbar_wait(&empty[s], (kt / STAGES - 1) & 1);
                mbar_arrive_expect_tx(&full[s], STAGE_BYTES);
                tma_load_stage<BN>(smem + s * STAGE_BYTES, A_BYTES, tma_a, tma_b, &full[s], m0, n0, kt * BK);
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        float acc[BM / 2] = {};
#pragma unroll 1
        for (int kt = 0; kt < KT; ++kt) {
            const int s = kt % STAGES;
            mbar_wait(&full[s], (kt / STAGES) & 1);
            const unsigned char* st = smem + s * STAGE_BYTES;
            wgmma_tf32_k_tile<BM>(acc, st, st + A_BYTES, c * 64);
            wgmma_wait<0>();
            fence_acc(acc);
            mbar_arrive(&empty[s]);
        }
        store_acc_t<BM>(acc, C, M, N, m0, n0 + c * 64);
    }
}
