// 14 geometry: the block-geometry sweep. One template over the block tile
// (BM x BN x BK) and the per-thread tile (TM x TN), with (BM/TM)*(BN/TN)
// threads, built like 09: float4 global loads and stores, As padded to BK + 1,
// B read from shared memory as float4 (LDS.128). A thread owns rows ty + TY*i
// and TN/4 float4 column groups 4tx + 4*TX*g, so a warp's LDS.128 reads are
// consecutive 16-byte chunks for every TN. Each instantiation is its own stage
// (geom_<BM>x<BN>x<BK>_<TM>x<TN>). Needs K % 4 == 0 and N % 4 == 0.
#include "simt_tiles.cuh"

// Blocks per SM the register budget must allow: 512 threads' worth (<= 128
// registers) for 8x4 per thread, 384 threads' worth (<= 168) for 8x8.
__host__ __device__ constexpr int geometry_min_blocks(int threads, int outputs) {
    return (outputs >= 64 ? 384 : 512) / threads > 1 ? (outputs >= 64 ? 384 : 512) / threads : 1;
}

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN), geometry_min_blocks((BM / TM) * (BN / TN), TM * TN))
sgemm_geometry(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    constexpr int TX = BN / TN, TY = BM / TM, THREADS = TX * TY, GROUPS = TN / 4;
    constexpr int A_CHUNKS = BM * BK / 4, B_CHUNKS = BK * BN / 4;
    static_assert(BM % TM == 0 && BN % TN == 0 && TN % 4 == 0 && BK % 4 == 0, "tile shapes must divide");
    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "whole warps");
    __shared__ float As[BM][BK + 1];
    __shared__ __align__(16) float Bs[BK][BN];
    const int t = threadIdx.x;
    const int tx = t % TX, ty = t / TX;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int l = 0; l < (A_CHUNKS + THREADS - 1) / THREADS; ++l) {
            const int id = t + THREADS * l, r = id / (BK / 4), c = id % (BK / 4) * 4;
            if (A_CHUNKS % THREADS == 0 || id < A_CHUNKS) {
                float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (row0 + r < M && k0 + c < K) v = *reinterpret_cast<const float4*>(&A[(size_t)(row0 + r) * K + k0 + c]);
                As[r][c] = v.x; As[r][c + 1] = v.y; As[r][c + 2] = v.z; As[r][c + 3] = v.w;
            }
        }
#pragma unroll
        for (int l = 0; l < (B_CHUNKS + THREADS - 1) / THREADS; ++l) {
            const int id = t + THREADS * l, r = id / (BN / 4), c = id % (BN / 4) * 4;
            if (B_CHUNKS % THREADS == 0 || id < B_CHUNKS) {
                float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (k0 + r < K && col0 + c < N) v = *reinterpret_cast<const float4*>(&B[(size_t)(k0 + r) * N + col0 + c]);
                *reinterpret_cast<float4*>(&Bs[r][c]) = v;
            }
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int g = 0; g < GROUPS; ++g) {
                const float4 v = *reinterpret_cast<const float4*>(&Bs[k][4 * tx + 4 * TX * g]);
                b[4 * g] = v.x; b[4 * g + 1] = v.y; b[4 * g + 2] = v.z; b[4 * g + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[ty + TY * i][k];
            outer_product_fma(acc, a, b);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + ty + TY * i;
#pragma unroll
        for (int g = 0; g < GROUPS; ++g) {
            const int c = col0 + 4 * tx + 4 * TX * g;
            if (r < M && c < N)
                *reinterpret_cast<float4*>(&C[(size_t)r * N + c]) =
                    make_float4(acc[i][4 * g], acc[i][4 * g + 1], acc[i][4 * g + 2], acc[i][4 * g + 3]);
        }
    }
}
