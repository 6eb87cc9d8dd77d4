// 01 warp_specialized_fp8: walk D's 03 step on 00. A 128x256 tile (twice 00's: FP32 results per byte
// loaded rise from 64 to 85 flops/byte) computed by two consumer warpgroups of wgmma m64n256k32 (128
// accumulators a thread), fed by a producer warpgroup whose one thread only issues TMA (A 128 x 128
// bytes, B 256 x 128 bytes a stage). Each stage has a "full" barrier (TMA bytes landed) and an "empty"
// barrier (both consumers done reading), so no block-wide barrier remains: the producer runs up to 4
// stages ahead while the tensor cores work. setmaxnreg moves registers from the producer (40) to the
// consumers (232) so that 128 accumulators fit without spilling. Accumulation and epilogue as in 00
// (the whole K in wgmma's accumulators, then times scale_a * scale_b).
// N % 8 == 0, K % 16 == 0, any M.
#include "hopper_fp8.cuh"

namespace f01 {
constexpr int BM = 128, BN = 256, BK = 128, STAGES = 4, THREADS = 384;
constexpr int A_BYTES = BM * BK, STAGE_BYTES = A_BYTES + BN * BK;
enum : int { SMEM_BYTES = STAGES * STAGE_BYTES };  // dynamic
}  // namespace f01

__global__ void __launch_bounds__(f01::THREADS, 1)
f_warp_specialized_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C,
                       const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K) {
    using namespace f01;
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
                tma_load_2d(st + A_BYTES, &tma_b, &full[s], kt * BK, col0);
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
            wgmma_fp8_k_tile<BN, BK>(acc, st + c * 64 * BK, st + A_BYTES);
            wgmma_wait<0>();
            fence_acc(acc);
            mbar_arrive(&empty[s]);
        }
        dequantise(acc, scale_a, scale_b);
        store_acc<BN>(acc, C, M, N, row0 + c * 64, col0);
    }
}
