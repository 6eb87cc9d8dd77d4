// 18 quiet_waits: 17 with waits that let the hardware suspend a waiting thread until its barrier's phase completes.
// Issue 31's cube targets are missed where every kernel sits at the 700 W cap (timed in blocks: H100 4096^3 98.6-99.6 %,
// 8192^3 99.2-99.8 % of cuBLAS): there time is energy, and 12's energy per launch at 8192^3 BF16 (1.15 J) is
// cuBLAS's (1.16 J, datasets/walkd-cubes), whatever the tiling (05-12 at 1.12-1.14 J batch by batch, h100-walkd2).
// What differs is how the waits wait (Nsight Compute at 1024^3, README.md 15): ours spend 23-27 % of stall samples on
// the branch of the mbarrier try_wait loop and issue about twice cuBLAS's instructions, whose waits sleep (NANOSLEEP).
// What changed: every mbarrier wait (hopper.cuh's mbar_wait: the producer's on a free stage, the consumers' on a full
// one) passes try_wait a suspend-time hint of QUIET_WAIT_NS, so a thread whose phase has not completed may be
// suspended until it does (up to that long) instead of returning at the hardware's own limit to branch and try again.
// Body, plan and launch are 17's (host_plan.cuh, half_launch_plan, a dependent launch); the other stages' CUBINs are
// unchanged (without the define mbar_wait is what it was).
// Predicted (H100, in blocks at the cap): fewer instructions issued a launch (smsp__inst_executed), the same bytes;
// if the waits' issue cost a percent of the power, a percent more clock: 4096^3 and 8192^3 at or above cuBLAS.
// N % 8 == 0, K % 8 == 0, any M.
#define QUIET_WAIT_NS 1000000  // 1 ms: far past any wait of a healthy pipeline, so the phase's completion ends it
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 17's grid (kernels/sources.py: BM 64 is also TMA_A's box rows) and dynamic shared memory.
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_quiet_waits(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
              const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
              int WIDTH, int DP, int SK) {
    host_plan::run_rows(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK);
}
