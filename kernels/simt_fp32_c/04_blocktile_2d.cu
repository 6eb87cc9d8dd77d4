// 04 blocktile_2d: each thread computes an 8 x 8 block of C as an outer product:
// per k it loads 8 As values and 8 Bs values into registers and does 64 FMAs
// (16 LDS per 64 FMA, down from 9 per 8). A 64 x 64 block tile, BK = 8, 64
// threads, each copying 8 elements of each tile per step. Loads and stores are
// still scalar, and the As column reads (8 rows apart per lane) conflict.
#include "simt_tiles.cuh"

constexpr int BM = 64, BN = 64, BK = 8, TM = 8, TN = 8, THREADS = (BM / TM) * (BN / TN);

extern "C" __global__ void __launch_bounds__(THREADS)
c_blocktile_2d(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    const int t = threadIdx.x;
    const int tx = t % (BN / TN), ty = t / (BN / TN);  // rows ty*TM.., columns tx*TN..
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int l = 0; l < BM * BK / THREADS; ++l) {
            const int id = t + THREADS * l, r = id / BK, c = id % BK;
            As[r][c] = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : 0.0f;
        }
#pragma unroll
        for (int l = 0; l < BK * BN / THREADS; ++l) {
            const int id = t + THREADS * l, r = id / BN, c = id % BN;
            Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(size_t)(k0 + r) * N + col0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[ty * TM + i][k];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx * TN + j];
            outer_product_fma(acc, a, b);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + ty * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int col = col0 + tx * TN + j;
            if (row < M && col < N) C[(size_t)row * N + col] = acc[i][j];
        }
    }
}
