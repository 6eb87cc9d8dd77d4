// 08 supertile: 07 with the block -> tile mapping remapped (supertile.cuh) so
// that consecutive blocks cover 4x4 squares of C tiles instead of a full tile
// row. Blocks that run at the same time then share 4 row panels of A and 4
// column panels of B, which raises the L2 hit rate; the kernel body is 07's.
#include "supertile.cuh"

constexpr int BM = 128, BN = 64, BK = 32, TM = 8, TN = 4, THREADS = 256;
constexpr int AS_LD = BK + 1;

extern "C" __global__ void __launch_bounds__(THREADS, 2)
sgemm_supertile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(16) float smem[];
    float (*As)[AS_LD] = reinterpret_cast<float (*)[AS_LD]>(smem);
    float (*Bs)[BN] = reinterpret_cast<float (*)[BN]>(smem + BM * AS_LD);
    const int t = threadIdx.x;
    const int tx = t % 16, ty = t / 16;
    int tile_row, tile_col;
    supertile_4x4(tile_row, tile_col);
    const int row0 = tile_row * BM, col0 = tile_col * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int l = 0; l < BM * BK / THREADS; ++l) {
            const int r = t / 32 + 8 * l, c = t % 32;
            As[r][c] = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : 0.0f;
        }
#pragma unroll
        for (int l = 0; l < BK * BN / THREADS; ++l) {
            const int r = t / 64 + 4 * l, c = t % 64;
            Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(size_t)(k0 + r) * N + col0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 b = *reinterpret_cast<const float4*>(&Bs[k][4 * tx]);
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const float a = As[ty + 16 * i][k];
                acc[i][0] += a * b.x; acc[i][1] += a * b.y; acc[i][2] += a * b.z; acc[i][3] += a * b.w;
            }
        }
        __syncthreads();
    }
    const int c = col0 + 4 * tx;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + ty + 16 * i;
        if (r < M && c < N)
            *reinterpret_cast<float4*>(&C[(size_t)r * N + c]) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    }
}
