// 23 tail_halves: 22, or 20's 256 x 192 tiles whole with the last, part-filled round's tiles cut in two halves of 128
// rows, where the host's plan finds that cheaper than 21's stream-K halves.
// At 8192^3 20-22 run 1376 tall tiles, 10.42 waves: 1310 whole, then 66 shared by two blocks in halves of K, each
// block's last unit (16's fix-up). A timeline of 21's blocks at the 700 W cap (H200, 06f9260, README.md) put a whole
// tile's k loop at 126 us and its C out at 4.1, a shared half's k loop at 62 us and its fix-up (both partials out to
// the workspace, both read back, C from registers) at 13: the launch ends on that fix-up.
// What changed: where the plan (host_plan.py, halves_launch_plan) says HALVES, the first DP tall tiles (whole rounds)
// run whole and each of the rest as two units of 128 x 192 (mixed_tiles.cuh, TallHalves: 22's kernel body with a
// 128-row second kind), whole, so no fix-up and no workspace; elsewhere 22's code.
// Predicted: at 8192^3 the last round 62 + 13 -> about 67 + 2 us: 0.4 % of the launch at a fixed clock.
// Measured (H200 GPU-d23c59ca, 3a5435f, README.md): 8192^3 % of cuBLAS by farm cell / do_bench, 21 -> 23, BF16 101.7 /
// 102.4 -> 103.3 / 104.0, FP16 102.5 / 102.3 -> 104.2 / 103.8; ncu 1393 -> 1368 us, tensor pipe 94.6 -> 95.7 %. Kept.
// N % 8 == 0, K % 8 == 0, any M.
#include "mixed_tiles.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 19's grid, boxes and dynamic shared memory (the tall ring of 3 x 56 KB and its staging fit in it).
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_tail_halves(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
              const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
              int WIDTH, int DP, int SK, int GROUP, int SPANS, int HALVES) {
    mixed_tiles::run_tail_halves<false>(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK, GROUP, SPANS, HALVES);
}
