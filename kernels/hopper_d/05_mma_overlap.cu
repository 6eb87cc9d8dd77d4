// 05 mma_overlap: 04 with one wgmma group kept in flight. 04's consumers wait for each
// k tile's 4 wgmmas to finish (wait_group 0) before releasing its stage and waiting on
// the next one, so each warpgroup leaves the tensor cores idle from its last wgmma's
// completion to its next issue, covered only by the other warpgroup. Here a warpgroup
// issues tile kt, then waits until at most that group is pending (wait_group 1), i.e.
// tile kt-1 is done, and releases kt-1's stage: the tensor pipe always holds the next
// group. Chained wgmmas on the same accumulators are ordered by the hardware.
// N % 8 == 0, K % 8 == 0, any M.
// The kernel's body is kernels/common/persistent_ws.cuh, shared with 04: KEEP_ONE_IN_FLIGHT = true.
#include "persistent_ws.cuh"

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_mma_overlap(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, int M, int N, int K) {
    persistent_ws::run<T, true>(tma_a, tma_b, C, M, N, K);
}
