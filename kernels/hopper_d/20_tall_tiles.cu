// 20 tall_tiles: 19 with tiles of 256 x 192, each consumer warpgroup 128 x 192, where the host's plan finds them cheaper.
// At the cubes in blocks at the 700 W cap a launch's time is its energy over the cap. The floor probe (README.md)
// measured 19's data movement at 14-19 % of that energy at 8192^3 (H100 and H200): DRAM 4-6 points of cuBLAS's time,
// L2 -> shared memory deliveries 12-14. What 19 and cuBLAS share is the bytes a tile takes in per MAC: a k tile of
// 128 x 256 loads (128 + 256) x 64 elements for 128 x 256 x 64 MACs, 384 / 32768 an element; cuBLAS's 320 x 128,
// 448 / 40960 (7 % fewer), and the two are level. A tile of 256 x 192 takes in 448 / 49152: 22 % fewer a MAC.
// Why not 192 x 256 over three consumer warpgroups: a block of 512 threads compiles at 128 registers a thread, and
// ptxas will not compile a wgmma with 128 accumulators in them (C7602), setmaxnreg or not.
// What changed: where the plan says ROWS 256, each consumer warpgroup runs two blocks of 64 rows (192 accumulators, of
// 240 registers: the producer gives up all but 24) as m64n192k16 wgmmas, both blocks' k16 steps in one group a k tile
// (wgmma_k_tile_desc's MB); a k tile is 56 KB (A in two 128-row boxes over TMA_A128, B in three), a ring of three
// (stream_k.cuh, ROWS 256); each block of 64 rows has its own stream-K fix-up counters and TMA stores. The plan
// (host_plan.py, tall_plan) costs 256 x 192 tiles, whole and with stream-K, beside 19's choices; elsewhere 19's code.
// Predicted (H100, H200): at the capped cubes where the plan takes tall tiles, about 3 points more of cuBLAS (22 %
// fewer bytes delivered of the 12-14 points they cost); elsewhere 19's times.
// Measured (runs h200-tall1/2, h100-tall3-8, README.md): in whole waves (8448 x 6144 x 8192, H200) 103.2 / 103.4 % of
// cuBLAS (19: 99.6 / 100.3), as predicted; at 8192^3 (1376 tiles, 10.4 waves) 101.6-102.3 % (H100, H200; 19:
// 98.4-101.3) with stream-K in ranges of half a tile (16's: 99.4 / 99.7); TMA's L2 reads 324 -> 267 M sectors, DRAM
// 1.25 -> 1.14 GB; the 9 LLM shapes its plan changes 96.3 -> 101.3 % (H100, BF16). Kept; 1.03x at 8192^3 not reached.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 19's grid, boxes and dynamic shared memory (the tall ring of 3 x 56 KB and its staging fit in it).
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_tall_tiles(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
             const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
             int WIDTH, int DP, int SK) {
    host_plan::run_rows<true, true>(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK);
}
