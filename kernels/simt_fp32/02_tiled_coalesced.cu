// 02 tiled_coalesced: same 32x32 tiles and 2x2 outputs per thread as 01, but a
// thread owns columns tx and tx+16 instead of 2tx and 2tx+1. Sixteen adjacent
// threads now touch 16 consecutive floats (64 bytes, two whole 32-byte sectors)
// on every global load and store, and read 16 consecutive words of Bs, one per
// bank. Rows stay ty and ty+16: a warp reads As at rows ty and ty+1, 32 words
// apart, which is still a 2-way bank conflict (padding comes in 05).
#include "simt_tiles.cuh"

enum : int { TILE = 32, BM = TILE, BN = TILE, THREADS = 256 };

extern "C" __global__ void __launch_bounds__(THREADS)
sgemm_tiled_coalesced(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc[2][2] = {};
    for (int k0 = 0; k0 < K; k0 += TILE) {
        load_ab_footprint<2, 2, 16, 1, 16>(As, Bs, A, B, M, N, K, row0, col0, k0, ty, tx);
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < TILE; ++k) outer_product_2x2<16, 16>(acc, As, Bs, k, ty, tx);
        __syncthreads();
    }
    store_tile<16, 1, 16>(C, acc, M, N, row0, ty, col0, tx);
}
