// 00 wgmma: walk B's TF32 GEMM (best: mma.sync m16n8k8, 0.32x cuBLAS TF32 on an H100) moved onto
// Hopper's asynchronous tensor-core instruction, with walk D 02's loads: a 128x128 tile, two
// warpgroups, TMA boxes (128-byte swizzled, zero-filled edges) landing on one mbarrier per stage,
// 4 stages of 32 k. wgmma takes TF32 operands only K-major from shared memory, and B (K x N) is
// N-major, so each warpgroup computes 64 columns of C^T = B^T A^T (kernels/common/hopper_tf32.cuh):
// B^T's fragments come from registers (32-bit shared loads, conflict-free), A^T is A's tile read by
// descriptor, m64n128k8 four times per k tile. Walk D took wgmma and TMA as two steps; for FP32 a
// cp.async stage would need its own hand-swizzled copy that no later stage keeps, so both come at once.
// Still one block barrier per k tile (wait_group 0), as in walk D 02.
// N % 4 == 0, K % 4 == 0 (TMA's 16-byte global strides), any M.
#include "hopper_tf32.cuh"

namespace t00 {
constexpr int BM = 128, BN = 128, BK = tf32h::KBOX, STAGES = 4, THREADS = 256;
constexpr int A_BYTES = BM * BK * 4, STAGE_BYTES = A_BYTES + BK * BN * 4;
}  // namespace t00

extern "C" __global__ void __launch_bounds__(t00::THREADS, 1)
tf32_wgmma(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    using namespace t00;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int KT = (K + BK - 1) / BK;

    auto issue = [&](int kt) {
        const int s = kt % STAGES;
        mbar_arrive_expect_tx(&full[s], STAGE_BYTES);
        tma_load_stage<BN>(smem + s * STAGE_BYTES, A_BYTES, tma_a, tma_b, &full[s], m0, n0, kt * BK);
    };

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1);
        mbar_init_fence();
        for (int s = 0; s < STAGES - 1 && s < KT; ++s) issue(s);
    }
    __syncthreads();

    float acc[BM / 2] = {};
#pragma unroll 1
    for (int kt = 0; kt < KT; ++kt) {
        // Every warpgroup is past tile kt-1 (waited below), so its buffer may be refilled.
        if (tid == 0 && kt + STAGES - 1 < KT) issue(kt + STAGES - 1);
        mbar_wait(&full[kt % STAGES], (kt / STAGES) & 1);
        const unsigned char* st = smem + (kt % STAGES) * STAGE_BYTES;
        wgmma_tf32_k_tile<BM>(acc, st, st + A_BYTES, wg * 64);
        wgmma_wait<0>();
        fence_acc(acc);
        __syncthreads();
    }
    store_acc_t<BM>(acc, C, M, N, m0, n0 + wg * 64);
}
