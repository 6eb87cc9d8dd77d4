// 04 persistent: 03's warp-specialized 128x256 kernel launched once per SM, each block
// walking tiles blockIdx.x, + gridDim.x, ... in a grouped order: 16 tile rows (2048
// rows of A) at a time, down the rows first. At 8192^3, 03's row-major launch order has
// the 132 resident tiles spanning 4 tile rows and all 32 tile columns, so every wave
// streams all of B (128 MB, more than the 50 MB L2) from DRAM; a 16 x ~8 patch needs
// 16 A strips (32 MB) and 8 B strips (32 MB). Persistence also hides each tile's
// prologue and epilogue: the producer starts the next tile's loads while the consumers
// store C. The stage/phase counters run on across tiles. N % 8 == 0, K % 8 == 0, any M.
// The kernel's body is kernels/common/persistent_ws.cuh, shared with 05: KEEP_ONE_IN_FLIGHT = false.
#include "persistent_ws.cuh"

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_persistent(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    persistent_ws::run<T, false>(tma_a, tma_b, C, M, N, K);
}
