// 05 bank_pad_vec: two shared-memory fixes on 04's 64x64 / 128-thread kernel.
// (1) A thread now owns 4 adjacent columns (4tx .. 4tx+3), so its 4 B values
// per k come from one LDS.128 instead of four LDS.32. (2) As rows are padded
// to BK + 1 floats: the two rows a warp reads (ty, ty+1) are 33 words apart,
// in different banks, which removes 04's 2-way conflict; the tile stores stay
// conflict free. Stores of C are still scalar (4 floats 16 bytes apart per
// thread, so each 32-byte sector gets 8 useful bytes per instruction): see 06.
#include "simt_tiles.cuh"

constexpr int BM = 64, BN = 64, BK = 32, TM = 8, TN = 4, THREADS = 128;

extern "C" __global__ void __launch_bounds__(THREADS, 3)
sgemm_bank_pad_vec(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[BM][BK + 1];
    __shared__ __align__(16) float Bs[BK][BN];
    const int t = threadIdx.x;
    const int tx = t % 16, ty = t / 16;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_a_rows<BM, BK, THREADS>(As, A, M, K, row0, k0, t);
#pragma unroll
        for (int l = 0; l < BK * BN / THREADS; ++l) {
            const int r = t / 64 + 2 * l, c = t % 64;
            Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(size_t)(k0 + r) * N + col0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float4 b;  // register fragment: B columns 4tx .. 4tx+3 of row k
            outer_product_step_b4<8>(acc, b, As, Bs, k, ty, 4 * tx);
        }
        __syncthreads();
    }
    store_tile<8, 4, 1>(C, acc, M, N, row0, ty, col0, tx);
}
