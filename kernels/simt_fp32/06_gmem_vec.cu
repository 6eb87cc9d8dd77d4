// 06 gmem_vec: 05 with the C store vectorised. A thread's 4 adjacent outputs
// of a row leave as one STG.128, so a warp's store fills whole 32-byte sectors
// (05's scalar stores used 8 bytes of each sector per instruction). Needs
// N % 4 == 0 so every row of C starts 16-byte aligned; then a 4-column group is
// either wholly inside N or wholly outside it.
#include "simt_tiles.cuh"

constexpr int BM = 64, BN = 64, BK = 32, TM = 8, TN = 4, THREADS = 128;

extern "C" __global__ void __launch_bounds__(THREADS, 3)
sgemm_gmem_vec(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
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
    const int c = col0 + 4 * tx;
    store_tile_f4<8>(C, acc, M, N, row0, ty, c);
}
