// 03 mma_overlap_fp8: walk D's 05 step on 02, one wgmma group kept in flight. 02's consumers wait for each k tile's
// four m64n256k32 wgmmas to finish (wait_group 0) before releasing its stage and waiting on the next, so each
// warpgroup leaves the tensor cores idle from its last wgmma's completion to its next issue, covered only by the
// other warpgroup. In FP8 a k tile is half as many tensor-core cycles as walk D's BF16 one (k32 per instruction at
// twice the rate), so that fixed gap is a larger share. Here a warpgroup issues k tile kt, waits until at most
// that group is pending (wait_group 1), i.e. kt-1 is done, and releases kt-1's stage.
// N % 8 == 0, K % 16 == 0, any M.
// The kernel's body is kernels/common/persistent_fp8.cuh (KEEP_ONE_IN_FLIGHT = true, CLUSTER = 1).
#include "persistent_fp8.cuh"

__global__ void __launch_bounds__(persistent_fp8::THREADS, 1)
f_mma_overlap_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C,
                  const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K) {
    persistent_fp8::run<true, 1>(tma_a, tma_b, C, scale_a, scale_b, M, N, K);
}
