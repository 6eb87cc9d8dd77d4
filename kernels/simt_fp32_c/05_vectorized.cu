// 05 vectorized: 04's tile and thread layout with 128-bit accesses. Global
// loads of A (along K) and B (along N) are float4 (LDG.128); A is stored
// transposed, As[k][m], so a thread's 8 A values per k are two LDS.128 like its
// 8 B values (4 LDS.128 per 64 FMA instead of 16 LDS.32); C is stored as float4.
// The 16-byte alignment of every chunk needs N % 4 == 0 and K % 4 == 0.
#include "simt_tiles.cuh"

constexpr int BM = 64, BN = 64, BK = 8, TM = 8, TN = 8, THREADS = (BM / TM) * (BN / TN);

extern "C" __global__ void __launch_bounds__(THREADS)
c_vectorized(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(16) float As[BK][BM];
    __shared__ __align__(16) float Bs[BK][BN];
    const int t = threadIdx.x;
    const int tx = t % (BN / TN), ty = t / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int l = 0; l < BM * BK / 4 / THREADS; ++l) {
            const int id = t + THREADS * l, r = id / (BK / 4), c = id % (BK / 4) * 4;
            const float4 v = (row0 + r < M && k0 + c < K) ? *reinterpret_cast<const float4*>(&A[(size_t)(row0 + r) * K + k0 + c]) : zero;
            As[c][r] = v.x; As[c + 1][r] = v.y; As[c + 2][r] = v.z; As[c + 3][r] = v.w;
        }
#pragma unroll
        for (int l = 0; l < BK * BN / 4 / THREADS; ++l) {
            const int id = t + THREADS * l, r = id / (BN / 4), c = id % (BN / 4) * 4;
            *reinterpret_cast<float4*>(&Bs[r][c]) =
                (k0 + r < K && col0 + c < N) ? *reinterpret_cast<const float4*>(&B[(size_t)(k0 + r) * N + col0 + c]) : zero;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&As[k][ty * TM + i]);
                a[i] = v.x; a[i + 1] = v.y; a[i + 2] = v.z; a[i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[k][tx * TN + j]);
                b[j] = v.x; b[j + 1] = v.y; b[j + 2] = v.z; b[j + 3] = v.w;
            }
            outer_product_fma(acc, a, b);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + ty * TM + i;
        if (row >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int col = col0 + tx * TN + j;
            if (col < N)
                *reinterpret_cast<float4*>(&C[(size_t)row * N + col]) = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
        }
    }
}
