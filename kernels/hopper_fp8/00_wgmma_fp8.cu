// 00 wgmma_fp8: the first FP8 stage, walk D's 02_tma with E4M3 operands. A 128x128 C tile, two
// warpgroups each issuing wgmma m64n128k32 (E4M3 x E4M3, FP32 accumulators) on its 64 rows, both
// operands read by the tensor cores from shared memory through descriptors. One thread issues each
// k tile as two TMA boxes (A 128 rows x 128 bytes of K, B 128 rows x 128 bytes of K: FP8 wgmma wants
// both operands K-major, so B is stored N x K) that land 128-byte swizzled and count their bytes on
// the stage's mbarrier; 4 stages in flight, out-of-range elements zero-filled by TMA. A k tile is 128
// FP8 k (4 wgmma k32), twice the k of walk D's 64-wide 16-bit tiles for the same bytes, so each
// barrier now guards twice the math: FP8's 2x tensor rate over BF16 needs its operands at the same
// bytes per second. Still one block-wide barrier per k tile (the tensor cores idle across it), and
// the whole K accumulates inside wgmma's accumulators (about 13 mantissa bits kept per instruction:
// the tolerance admits it; promotion to FP32 registers is a later step). Epilogue: the accumulators
// times scale_a * scale_b, the per-tensor dequantisation factors, read from the device.
// Tensor maps: farm/measure/tma.py. N % 8 == 0 (float2 stores), K % 16 == 0 (TMA's 16-byte global
// strides), any M.
#include "hopper_fp8.cuh"

namespace f00 {
constexpr int BM = 128, BN = 128, BK = 128, STAGES = 4, THREADS = 256;
constexpr int A_BYTES = BM * BK, STAGE_BYTES = A_BYTES + BN * BK;
enum : int { SMEM_BYTES = STAGES * STAGE_BYTES };  // dynamic
}  // namespace f00

__global__ void __launch_bounds__(f00::THREADS, 1)
f_wgmma_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C,
            const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K) {
    using namespace f00;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int KT = (K + BK - 1) / BK;

    auto issue = [&](int kt) {
        unsigned char* st = smem + (kt % STAGES) * STAGE_BYTES;
        mbar_arrive_expect_tx(&full[kt % STAGES], STAGE_BYTES);
        tma_load_2d(st, &tma_a, &full[kt % STAGES], kt * BK, row0);
        tma_load_2d(st + A_BYTES, &tma_b, &full[kt % STAGES], kt * BK, col0);
    };

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1);
        mbar_init_fence();
        for (int s = 0; s < STAGES - 1 && s < KT; ++s) issue(s);
    }
    __syncthreads();

    float acc[BN / 2] = {};
#pragma unroll 1
    for (int kt = 0; kt < KT; ++kt) {
        // Every warpgroup is past tile kt-1 (waited below), so its buffer may be refilled.
        if (tid == 0 && kt + STAGES - 1 < KT) issue(kt + STAGES - 1);
        mbar_wait(&full[kt % STAGES], (kt / STAGES) & 1);
        const unsigned char* st = smem + (kt % STAGES) * STAGE_BYTES;
        wgmma_fp8_k_tile<BN, BK>(acc, st + wg * 64 * BK, st + A_BYTES);
        wgmma_wait<0>();
        fence_acc(acc);
        __syncthreads();
    }
    dequantise(acc, scale_a, scale_b);
    store_acc<BN>(acc, C, M, N, row0 + wg * 64, col0);
}
