// PROBE (walkd15 call 1): kernels/common/row_pairs.cuh without a cluster.
#include "row_pairs.cuh"
enum : int { THREADS = 256, BM = 64, BN = 128, SMEM_BYTES = row_pairs::SMEM_BYTES };
template <typename T>
__global__ void __launch_bounds__(THREADS, 1)
d_v64(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    row_pairs::run<T, 1>(tma_a, tma_b, C, M, N, K);
}
