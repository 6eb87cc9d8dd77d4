// 04 warp_rebalance: same 64x64 block tile (BK = 32) as 03, but 128 threads of
// 8x4 outputs each (rows ty + 8i, columns tx + 16j) instead of 64 threads of
// 16x4. Per-thread registers roughly halve, and __launch_bounds__(128, 3)
// guarantees <= 168 so at least three blocks (12 warps) are resident per SM on
// sm_86 (3 * 128 * 168 = 64,512 <= 65,536 registers; 3 * (16 KB + 1 KB) of
// 100 KB shared memory). NVRTC 13 uses 96 registers on sm_86, so five blocks
// (20 warps) fit, against five blocks of 2 warps for 03. More warps give each
// scheduler something to issue while others wait on shared-memory loads. The
// As reads are 2-way bank conflicted (a warp reads rows ty and ty+1, 32 words
// apart, same bank): 05 pads the rows.
#include "simt_tiles.cuh"

constexpr int BM = 64, BN = 64, BK = 32, TM = 8, TN = 4, THREADS = 128;

extern "C" __global__ void __launch_bounds__(THREADS, 3)
sgemm_warp_rebalance(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    const int t = threadIdx.x;
    const int tx = t % 16, ty = t / 16;  // 16 column groups x 8 row groups
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
            float a[TM], b[TN];  // register fragments
            outer_product_step<8, 16>(acc, a, b, As, Bs, k, ty, tx);
        }
        __syncthreads();
    }
    store_tile<8, 1, 16>(C, acc, M, N, row0, ty, col0, tx);
}
