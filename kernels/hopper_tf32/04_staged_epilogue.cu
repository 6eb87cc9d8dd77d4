// 04 staged_epilogue: 01's kernel (the fastest of 01-03 in the farm's batches at 2048^3 and 8192^3)
// with C written through shared memory. 01-03 store C^T from the accumulators: 128 scalar stores a
// thread, each warp store covering 4 rows of C in 8 half sectors. Here, once both consumers are
// past their last wgmma (a named barrier over their 256 threads), the ring's 192 KB is free: each
// consumer writes its 64 columns x 256 rows into a row-major 256 x 130 FP32 tile (rows padded by 2
// floats: a warp's 32 scalar writes land in 32 banks), and after a second barrier the 256 threads
// copy it out row by row, 8 bytes a thread, a warp writing 256 contiguous bytes of one row of C.
// N % 4 == 0, K % 4 == 0, any M.
#include "hopper_tf32.cuh"

namespace t04 {
constexpr int BM = 256, BN = 128, BK = tf32h::KBOX, STAGES = 4, THREADS = 384, CS = BN + 2;
constexpr int A_BYTES = BM * BK * 4, STAGE_BYTES = A_BYTES + BK * BN * 4;
enum : int { SMEM_BYTES = STAGES * STAGE_BYTES };  // dynamic
static_assert(BM * CS * 4 <= STAGES * STAGE_BYTES, "the staged C tile must fit the ring");
}  // namespace t04

// The 256 consumer threads (warps 4-11) only; barrier 0 is __syncthreads.
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 256;\n" ::: "memory"); }

extern "C" __global__ void __launch_bounds__(t04::THREADS, 1)
tf32_staged_epilogue(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    using namespace t04;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int KT = (K + BK - 1) / BK;

    if (tid == 0) {
        ring_init<STAGES>(full, empty, 256);
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
        // Every TMA load has landed (each was waited for) and both consumers' wgmmas are done: the ring is free.
        consumers_sync();
        float* cs = reinterpret_cast<float*>(smem);
        const int warp = tid % 128 / 32, lane = tid % 32;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int col = c * 64 + bt_column(warp, lane / 4, h);
#pragma unroll
            for (int j = 0; j < BM / 8; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) cs[(j * 8 + 2 * (lane % 4) + e) * CS + col] = acc[4 * j + 2 * h + e];
        }
        consumers_sync();
        const int ct = tid - 128, n = n0 + 2 * (ct % 64);
#pragma unroll 4
        for (int r = ct / 64; r < BM; r += 4) {
            const int m = m0 + r;
            if (m < M && n < N) *reinterpret_cast<float2*>(C + (size_t)m * N + n) = *reinterpret_cast<const float2*>(cs + r * CS + 2 * (ct % 64));
        }
    }
}
