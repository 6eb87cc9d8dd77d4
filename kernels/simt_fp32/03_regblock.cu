// 03 regblock: register blocking. The block tile grows to 64x64 (BK = 32) and
// each of 64 threads computes a 16x4 block of C: rows ty + 4i, columns
// tx + 16j (02's column-aligned mapping, kept). Per k a thread reads 16 A and
// 4 B values from shared memory into registers and issues 64 FMAs: each A
// register feeds 4 columns, each B register 16 rows, so shared loads per FMA
// fall from 1/2 (02) to 20/64. That relieves the LSU pipe that capped 01-02.
#include "simt_tiles.cuh"

constexpr int BM = 64, BN = 64, BK = 32, TM = 16, TN = 4, THREADS = 64;

extern "C" __global__ void __launch_bounds__(THREADS)
sgemm_regblock(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    const int t = threadIdx.x;
    const int tx = t % 16, ty = t / 16;  // 16 column groups x 4 row groups
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        // A tile: each warp reads 32 consecutive floats of one row of A.
        load_a_rows<BM, BK, THREADS>(As, A, M, K, row0, k0, t);
        // B tile: each warp reads 32 consecutive floats of one row of B.
#pragma unroll
        for (int r = 0; r < BK; ++r)
            Bs[r][t] = (k0 + r < K && col0 + t < N) ? B[(size_t)(k0 + r) * N + col0 + t] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];  // register fragments
            outer_product_step<4, 16>(acc, a, b, As, Bs, k, ty, tx);
        }
        __syncthreads();
    }
    store_tile<4, 1, 16>(C, acc, M, N, row0, ty, col0, tx);
}
