// 02 tma: 01's tile and wgmma, loads by the Tensor Memory Accelerator. One thread issues
// each k tile as three TMA boxes (A 128 x 64; B two 64 x 64 column panels) that land
// already 128-byte swizzled; the copy engine counts their bytes on the stage's
// mbarrier and the warpgroups wait on its phase. No address arithmetic, no zero-fill
// branches (TMA fills out-of-range elements with zeros), no proxy fence (TMA is the
// async proxy, like wgmma), and 4 stages in flight from one thread instead of 256 x 8
// cp.async. Still one barrier per k tile, so the tensor cores idle across it.
// Tensor maps: built by farm/measure/tma.py, passed by value as __grid_constant__ parameters.
// N % 8 == 0, K % 8 == 0 (TMA's 16-byte global strides), any M.
#include "hopper.cuh"

namespace d02 {
constexpr int BM = 128, BN = 128, BK = 64, STAGES = 4, THREADS = 256;
constexpr int A_BYTES = BM * BK * 2, B_PANEL = BK * 128, STAGE_BYTES = A_BYTES + BK * BN * 2;
enum : int { SMEM_BYTES = STAGES * STAGE_BYTES };  // dynamic
}  // namespace d02

template <typename T>
__global__ void __launch_bounds__(d02::THREADS, 1)
d_tma(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    using namespace d02;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int KT = (K + BK - 1) / BK;

    auto issue = [&](int kt) {
        unsigned char* st = smem + (kt % STAGES) * STAGE_BYTES;
        mbar_arrive_expect_tx(&full[kt % STAGES], STAGE_BYTES);
        tma_load_2d(st, &tma_a, &full[kt % STAGES], kt * BK, row0);
#pragma unroll
        for (int p = 0; p < BN / 64; ++p) tma_load_2d(st + A_BYTES + p * B_PANEL, &tma_b, &full[kt % STAGES], col0 + p * 64, kt * BK);
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
        wgmma_k_tile<BN, BK, T>(acc, st + wg * 64 * 128, st + A_BYTES, B_PANEL);
        wgmma_wait<0>();
        fence_acc(acc);
        __syncthreads();
    }
    store_acc<BN>(acc, C, M, N, row0 + wg * 64, col0);
}
