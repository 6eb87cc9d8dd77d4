// PROBE (walkd15 call 1): 11 with griddepcontrol at entry (lets the next grid launch, waits for the previous one).
#include "host_plan.cuh"
enum : int { BM = 128, BN = 8 };
template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_hp_pdl(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* __restrict__ W,
         int M, int N, int K, int WIDTH, int DP, int SK) {
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    host_plan::run<T, false>(tma_a, tma_b, nullptr, C, W, M, N, K, WIDTH, DP, SK);
}
