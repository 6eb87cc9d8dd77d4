// 14 cluster_pair: at 65-128 tokens each tile's K is halved between the two CTAs of a 2-CTA cluster and the halves are
// summed through distributed shared memory; 13 elsewhere, in clusters of 2.
// Issue 31 asked for 1024^3 (88 % of cuBLAS on the H200 for 11, the best walk-D stage there) and the LLM layers at 128
// tokens (H100: 80-83 % of cuBLAS; 13 79.7 %). Where 1024^3 goes: 11's and 12's plan runs it as 128 tiles of 128 x 64
// on 128 of 132 SMs, whole K, 16 k tiles of four m64n64k16 a consumer warpgroup, each SM loading 16 x 24 KB (A re-read
// for each of 16 tile columns: 48 MB through L2). Nsight Compute on the H200 (one launch, BF16): 11 9.2-9.3 us, tensor
// pipe 32 % of active cycles, issue slots 28 %, memory throughput 31 %: latency-bound, nothing saturated. cuBLAS there
// (7.3-7.4 us, tensor pipe 42 %) runs nvjet_sm90_tss_128x64_64x8_1x2: the same 128 x 64 tiles and 64-deep k tiles, 8
// stages, in clusters of 1 x 2.
// What this stage does (SPLIT = 128 or 64, the tile width): the cluster's two CTAs take the same 128 x SPLIT tile, CTA r
// the k tiles of half r of K (05's producer and two consumers, 09's ring). Consumer warpgroup c of CTA r then either
// sends its 64 x SPLIT partial to the peer (c != r) with st.async, whose bytes complete the peer's mbarrier as a TMA
// load's do, or (c == r) waits for the peer's partial of its 64 rows, adds it and stores C. No workspace, no fence to
// global memory, no counter in global memory, and the same sum whichever CTA finishes first. At 128 tokens it replaces
// 13's swapped tiles whose K slices meet in a workspace (or 13's whole tiles in three waves): 128 x 4096 x 4096 runs as
// 64 tiles of 128 x 64 on 128 CTAs of 32 k tiles each, 128 x 8192 x 8192 as 64 tiles of 128 x 128 on 128 CTAs of 64.
// Measured on an H200 (kernels/hopper_d/README.md): the 12 LLM shapes at 128 tokens 13's 74.1 % of cuBLAS (geometric
// mean, BF16) -> 91.1 %, 128 x 4096 x 4096 74 -> 118 %, 128 x 3584 x 3584 55 -> 88 %, 128 x 8192 x 28672 87 -> 123 %.
// Tried for 1024^3 and not kept, both verified on the GPU and slower than 11 there:
// - SPLIT at 1024^3 (64 tiles of 128 x 128 on 128 CTAs of 8 k tiles, 32 MB through L2): 74 % of cuBLAS against 11's
//   87 %, ncu 11.7 us: 8 k tiles a CTA do not pay for the exchange and the cluster's start. So SPLIT is planned only
//   at 65-128 tokens, where the CTAs walk 28 to 224 k tiles.
// - cuBLAS's layout, two horizontally adjacent 128 x 64 tiles a cluster sharing A by TMA multicast (each CTA loading
//   half of A's rows as four 16-row boxes multicast to both, and its own B; 06's empty-barrier protocol along N; commit
//   1472be6 of branch walkd14): 62 % at 1024^3 and 50 % at 1024 x 1024 x 4096 (11: 87 and 80 %), ncu 10.9 us, tensor pipe
//   25 %; presumably each k tile's refill, which waits for both CTAs' consumers across the SM-to-SM network, is not
//   hidden by an 8-deep ring of 64-wide k tiles (not isolated). So 1024^3 stays on 13's path (12's plan).
// The plan (kernels/hopper_d/cluster_plan.py, on the host as 11-13): SPLIT at 65-128 tokens where the pairs keep half
// the grid busy, its width the cheaper in 09's k-tile times; else 0 and 13's arguments (TN, BNT, SLICES up to 128
// tokens: the swapped product; WIDTH, DP, SK above: 12). The grid is 13's rounded to even; 13's paths run unchanged in
// clusters of 2, which cost them 1-3 % (H200, 2048^3: 96.2-96.7 % against 13's 98.2-98.7 %).
// N % 8 == 0, K % 8 == 0, any M.
#include "cluster_pair.cuh"
#include "host_plan.cuh"
#include "swapped.cuh"

// 13's persistent grid (kernels/sources.py): one block per SM wherever ceil(N / 8) x ceil(M / 16) allows, in clusters of
// 2; BM is TMA_A's box rows (the swap's). Dynamic shared memory: 12's ring and staging space, which holds the swap's
// ring and SPLIT's ring and receive buffer.
enum : int { BM = 16, BN = 8, CLUSTER = 2, SMEM_BYTES = persistent_ws::SMEM_BYTES + tma_store::BYTES };
static_assert(SMEM_BYTES >= swapped::RING_BYTES, "the swapped ring fits");
static_assert(SMEM_BYTES >= cluster_pair::RECV_OFFSET + cluster_pair::RECV_BYTES, "the split's receive buffer fits");

// SPLIT: 128 or 64 (a split pair's tile width), or 0: 13's path on TN, BNT, SLICES (up to 128 tokens) or WIDTH, DP, SK
// (above); all from kernels/hopper_d/cluster_plan.py.
template <typename T>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(persistent_ws::THREADS, 1)
d_cluster_pair(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
               const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int SPLIT,
               int TN, int BNT, int SLICES, int WIDTH, int DP, int SK) {
    const swapped::Bit16<T> ops{};
    if (SPLIT == 128) cluster_pair::run_split<T, 128>(tma_a128, tma_b, C, M, N, K);
    else if (SPLIT == 64) cluster_pair::run_split<T, 64>(tma_a128, tma_b, C, M, N, K);
    else if (!swapped::run_swapped(ops, tma_a, tma_b, C, W, stream_k::arrivals, M, N, K, TN, BNT, SLICES))
        host_plan::run<true>(ops, tma_a128, tma_b, &tma_c, C, W, M, N, K, WIDTH, DP, SK);
}
