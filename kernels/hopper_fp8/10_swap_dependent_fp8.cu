// 10 swap_dependent_fp8: 07 launched as a programmatic dependent launch (walk D 15's launch on walk F's decode path).
// Issue 32's FP8 shapes below 0.9x of cuBLASLt at few tokens are short kernels: on an H100 (run f10, 2026-11-27, one
// repeat, 07 the best stage) 1 x 3584 x 3584 6.59 us against cuBLASLt's 5.58 (86 %), 1 x 4096 x 4096 7.04 / 6.04,
// 16 x 3584 x 3584 6.23 / 4.95 (80 %), 16 x 4096 x 4096 6.67 / 5.43, while at 1 x 18944 x 3584, five times the bytes,
// 07 took 29.0 us to cuBLASLt's 28.2: the gap is about 1 us a launch whatever the size, not bandwidth. Walk D 15 found
// about 0.5 us of such a launch outside the k loop (setup, block barrier, the grid's start after the previous kernel
// drained: 6.71 -> 6.23 us a launch at 1024^3 BF16 on an H200, back to back in CUDA graphs).
// What changed: the launch (Launch.dependent, farm/measure/dependent_launch.py); after 07's setup (tensor-map prefetch,
// ring initialisation, block barrier) every thread runs griddepcontrol.launch_dependents, then griddepcontrol.wait,
// so no load of A, B or the scales and no store of C, the workspace or the arrival counters precedes the previous
// kernel's completion. Body and plan are 07's (swapped.cuh and split_k_fp8.cuh with DEPENDENT, swap_plan.py); 07's
// CUBIN is unchanged.
// Predicted (H100): the four shapes above up to 0.5 us a launch faster, 88-95 % of cuBLASLt FP8; longer kernels
// within the spread of 07.
// Measured (H100, run f10b, three repeats, us 10 / 07 / cuBLASLt): 6.02 / 6.75 / 5.26, 6.37 / 7.06 / 6.04, 5.68 / 6.19
// / 4.95, 6.04 / 6.61 / 5.30: 0.5-0.7 us a launch, 87-96 %; over the 24 decode shapes 105.7 % against 07's 99.1.
// N % 8 == 0, K % 16 == 0, any M.
#include "split_k_fp8.cuh"
#include "swapped.cuh"

// The launch (kernels/sources.py): 07's boxes (16 tokens of A, 64 features of B), grid and shared memory.
namespace f10 {
enum : int {
    BM = 16,
    BN = 64,
    SMEM_BYTES = swapped::RING_BYTES,
};
}  // namespace f10

__device__ unsigned int f10_arrivals[split_k_fp8::ARRIVALS];  // one per (tile, consumer warp), zero between launches

// 07's arguments and branches: tn 16, 64 or 128 tokens a tile (0 above 128 tokens: 05's path), bnt, slices.
__global__ void __launch_bounds__(persistent_fp8::THREADS, 1)
f_swap_dependent_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* W,
                     const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K, int tn, int bnt,
                     int slices) {
    const swapped::Fp8 ops{scale_a, scale_b};
    if (!swapped::run_swapped<true>(ops, tma_a, tma_b, C, W, f10_arrivals, M, N, K, tn, bnt, slices))
        split_k_fp8::run<f10::BM, f10::BN, true>(tma_a, tma_b, C, W, f10_arrivals, scale_a, scale_b, M, N, K, slices);
}
