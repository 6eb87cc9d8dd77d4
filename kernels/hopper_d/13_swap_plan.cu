// 13 swap_plan: 10's swapped product (C^T = B^T A^T, the tokens as wgmma's N) up to M = 128 tokens, on a plan made on
// the host, with walk F 07's fix-up; 12 above 128 tokens. At M <= 128 12 plans 128-row tiles of whole waves or
// stream-K and ran at 34-62 % of cuBLAS on the H100 (128 x 1024 x 8192 34 %, 16 x 4096 x 4096 37 %, 128 x 4096 x
// 4096 61 %: a 128-row tile is 1 to 16 real rows of A at decode, few tiles on 132 SMs); 10
// reached 87-88 % at M = 1 and 16 and 78 % at 128 with its plan made in the kernel and 64-token tiles past 16; walk
// F's 07 took 10's idea further in FP8 (98.7 % and 99.3 % of cuBLASLt at M = 1 and 16). This is 07 in 16-bit:
// - Tokens up to 128 swapped: TN = 16, 64 or 128 (m64nTNk16, the wgmma_swapped of kernels/common/hopper.cuh), the
//   fewest that hold M, so a 128-token layer is one tile of tokens by 128 or 64 features with K in slices, where 10
//   ran two 64-token tiles.
// - The plan on the host (kernels/hopper_d/swap_plan.py, walk F's model with 16-bit k tiles: 64 elements deep, the same
//   128-byte rows): TN, BNT (features a tile) and SLICES arrive as launch arguments, the workspace is sized from them,
//   and thread 0 prefetches the tensor maps where 10's warp 0 costs 16 plans before the first load (11's lesson).
// - The fix-up in the accumulators' order (07's): a warp's partial stored as TN / 8 float4 a lane, and the last warp
//   to arrive loads every slice's float4s of a chunk before it adds any (10 wrote C^T elementwise into M x N planes
//   and read them back one plane after another).
// The pipeline is walk F's, made precision-generic (kernels/common/swapped.cuh, Bit16<T> operands: B's 64 x 64 boxes
// read MN-major as 10 reads them). Above 128 tokens TN is 0 and the block runs 12 (kernels/common/host_plan.cuh, TMA
// stores) on 12's plan (WIDTH, DP, SK) over TMA_A128, A in 12's 128-row boxes (farm/measure/tma.py): TMA_A's boxes are
// 16 rows, the swap's.
// Predicted (H100, the LLM shapes of plans/llm.toml): M = 1 and 16 at or above 10's 87-88 % of cuBLAS (its fixed
// costs less the in-kernel plan and the plane-by-plane fix-up), M = 128 from 12's 34-61 % to 10's and 07's range,
// 75-80 % (128 x 4096 x 4096: 32 tiles x 4 slices, B read once); above 128 tokens as 12.
// Measured on an H100 (README.md, geometric means over the LLM shapes, BF16 and FP16 alike): M = 1
// 101.8 % of cuBLAS, M = 16 104.7 % (10 in the same call: 88.3 and 87.5 %), M = 128 79.7 % (12: 59.7 %, 10: 78.3 %;
// 10's two 64-token tiles still win 4 of the 12 shapes there). ncu at 128 x 1024 x 8192: 32.8 -> 17.4 us, DRAM
// throughput 17 -> 33 %.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"
#include "swapped.cuh"

// The persistent grid (kernels/sources.py): one block per SM wherever ceil(N / 8) x ceil(M / 16) allows; BM is also
// TMA_A's box rows. Dynamic shared memory: 12's (its ring and staging buffers), which holds the swap's ring too.
enum : int { BM = 16, BN = 8, SMEM_BYTES = persistent_ws::SMEM_BYTES + tma_store::BYTES };
static_assert(SMEM_BYTES >= swapped::RING_BYTES, "the swapped ring fits 12's dynamic shared memory");

// TN: tokens a tile (16, 64 or 128; 0 above 128 tokens: 12's path), BNT: features a tile (128 or 64), SLICES: K
// slices; WIDTH, DP, SK: 12's plan (0 on the swapped path); all from kernels/hopper_d/swap_plan.py. Split tiles count
// their arrivals on stream_k.cuh's counters (zero between launches, whichever path ran).
template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_swap_plan(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
            const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int TN, int BNT,
            int SLICES, int WIDTH, int DP, int SK) {
    const swapped::Bit16<T> ops{};
    if (!swapped::run_swapped(ops, tma_a, tma_b, C, W, stream_k::arrivals, M, N, K, TN, BNT, SLICES))
        host_plan::run<true>(ops, tma_a128, tma_b, &tma_c, C, W, M, N, K, WIDTH, DP, SK);
}
