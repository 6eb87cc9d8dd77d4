// 01 wmma_naive: tensor cores through the WMMA API at their simplest. Each warp
// owns one 16 x 16 tile of C (a block of 4 warps covers 32 x 32) and for every
// k step of 16 loads its A and B fragments straight from global memory
// (load_matrix_sync, row-major both) and issues one mma_sync, FP32 accumulate.
// No shared memory, no reuse between warps: every fragment is re-read from
// L2/DRAM by each warp that needs it. Global fragment loads need 32-byte aligned
// whole 16 x 16 tiles, hence M, N and K multiples of 16.
#include "walkc_wmma.cuh"

enum : int { BM = 32, BN = 32, THREADS = 128 };  // 2 x 2 warps of one 16 x 16 tile each

template <typename T>
__global__ void __launch_bounds__(THREADS)
h_wmma_naive(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using namespace walkc;
    const int warp = threadIdx.x / 32;
    const int r = blockIdx.y * BM + 16 * (warp / 2), c = blockIdx.x * BN + 16 * (warp % 2);
    if (r >= M || c >= N) return;  // warp-uniform; with M, N multiples of 16 a tile is all in or all out
    FragC acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < K; k += 16) {
        FragA<T> a;
        FragB<T> b;
        wmma::load_matrix_sync(a, A + (size_t)r * K + k, K);
        wmma::load_matrix_sync(b, B + (size_t)k * N + c, N);
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(C + (size_t)r * N + c, acc, N, wmma::mem_row_major);
}
