// 03 warp_specialized: a 128x256 tile (twice 02's; the FP32 result per byte loaded
// rises from 64 to 85 flops/byte) computed by two consumer warpgroups of wgmma
// m64n256k16 (128 accumulators a thread), fed by a producer warpgroup whose one thread
// only issues TMA. Stages have a "full" barrier (TMA bytes landed) and an "empty"
// barrier (both consumers done reading), so neither side waits on a block-wide
// barrier: the producer runs up to 4 tiles ahead and the tensor cores stay busy while
// a consumer signals. setmaxnreg moves registers from the producer (40) to the
// consumers (232) so the 128 accumulators fit without spilling.
// N % 8 == 0, K % 8 == 0, any M.
#include "hopper.cuh"

namespace d03 {
constexpr int BM = 128, BN = 256, BK = 64, STAGES = 4, THREADS = 384;
constexpr int A_BYTES = BM * BK * 2, B_PANEL = BK * 128, STAGE_BYTES = A_BYTES + BK * BN * 2;
enum : int { SMEM_BYTES = STAGES * STAGE_BYTES };  // dynamic
}  // namespace d03

template <typename T>
__global__ void __launch_bounds__(d03::THREADS, 1)
d_warp_specialized(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    using namespace d03;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
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
                unsigned char* st = smem + s * STAGE_BYTES;
                mbar_arrive_expect_tx(&full[s], STAGE_BYTES);
                tma_load_2d(st, &tma_a, &full[s], kt * BK, row0);
#pragma unroll
                for (int p = 0; p < BN / 64; ++p) tma_load_2d(st + A_BYTES + p * B_PANEL, &tma_b, &full[s], col0 + p * 64, kt * BK);
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        float acc[BN / 2] = {};
#pragma unroll 1
        for (int kt = 0; kt < KT; ++kt) {
            const int s = kt % STAGES;
            mbar_wait(&full[s], (kt / STAGES) & 1);
            const unsigned char* st = smem + s * STAGE_BYTES;
            wgmma_k_tile<BN, BK, T>(acc, st + c * 64 * 128, st + A_BYTES, B_PANEL);
            wgmma_wait<0>();
            fence_acc(acc);
            mbar_arrive(&empty[s]);
        }
        store_acc<BN>(acc, C, M, N, row0 + c * 64, col0);
    }
}
