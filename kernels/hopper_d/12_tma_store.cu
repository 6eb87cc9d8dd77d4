// 12 tma_store: 11 with C leaving through shared memory and TMA stores (fast.cu's last step, /work/shared/ANCHORS.md).
// 05-11 store C from registers: each consumer thread writes float2s, a warp instruction touching 8 rows x 32 bytes,
// 268 MB of FP32 C at 8192^3 as 8-byte stores, and the warpgroup's tensor work waits behind them. Here a whole tile's
// 64 x WIDTH accumulators (per consumer warpgroup) go to shared memory in 64 x 32 chunks laid out in TMA's 128-byte
// swizzle (bank-spread writes), and one thread stores each chunk with one bulk tensor copy (cp.async.bulk.tensor,
// clipped at M and N by TMA): whole 128-byte lines to L2, issued asynchronously, so the warpgroup moves on to the next
// chunk and the next tile while the copy drains. The ring is not free for this (the producer is already filling it with
// the next tile's k tiles), so each consumer warpgroup gets two 8 KB staging buffers of its own past the 192 KB ring
// (224 KB of dynamic shared memory, of 227 KB), alternating: the warpgroup fills one while the copy of the other
// reads it. Tiles finished by stream-K's fix-up keep 11's register stores: the last arrival is counted per warp, so
// the four warps of a warpgroup may finish that tile in different blocks. C's tensor map (TMA_C): FP32, 64 x 32 boxes
// (farm/measure/tma.py).
// Predicted: 8192^3 1-3 % faster than 11 (fewer L2 transactions, the epilogue off the tensor pipe's critical path;
// issue 31's lead (1)); 1024^3 and 2048^3 about 11's (one tile a block: the copy's latency is exposed once). Measured
// on an H100: 2048^3 and 4096^3 beat that (98.7 and 101.1 % of cuBLAS BF16 from 11's 92.4 and 97.8; README.md).
// N % 8 == 0, K % 8 == 0, any M.
// The kernel's body: kernels/common/host_plan.cuh with TMA_STORE = true; the stores: kernels/common/tma_store.cuh.
#include "host_plan.cuh"

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 11's persistent grid (kernels/sources.py reads BM and BN here before the header's 128x256 ring's); the ring's 192 KB,
// then the staging buffers.
enum : int { BM = 128, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_tma_store(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, const __grid_constant__ TensorMap tma_c,
            float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int WIDTH, int DP, int SK) {
    host_plan::run<true>(operands::Bit16<T>{}, tma_a, tma_b, &tma_c, C, W, M, N, K, WIDTH, DP, SK);
}
