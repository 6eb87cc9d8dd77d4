// 01 tiled: 32x32 tiles of A and B are staged in shared memory, so each value
// fetched from global memory is reused by 32 threads instead of one. 256 threads
// each own a 2x2 block of C (rows ty, ty+16; cols 2tx, 2tx+1), so every shared
// load feeds two FMAs. The thread->column mapping (2 adjacent columns per
// thread, for loads and stores alike) makes each scalar access instruction use
// half of every 32-byte sector a warp touches: step 02 fixes that.
#include "simt_tiles.cuh"

enum : int { TILE = 32, BM = TILE, BN = TILE, THREADS = 256 };

extern "C" __global__ void __launch_bounds__(THREADS)
sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc[2][2] = {};
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Each thread loads the 2x2 footprint it computes: adjacent threads are
        // 8 bytes apart, so every 32-byte sector a warp touches is half used.
        load_ab_footprint<2, 2, 16, 2, 1>(As, Bs, A, B, M, N, K, row0, col0, k0, ty, tx);
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < TILE; ++k) outer_product_2x2<16, 1>(acc, As, Bs, k, ty, 2 * tx);
        __syncthreads();
    }
    store_tile<16, 2, 1>(C, acc, M, N, row0, ty, col0, tx);
}
