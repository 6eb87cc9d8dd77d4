// 14 cluster_pair: the two CTAs of a 2-CTA cluster share one product, either splitting each tile's K in halves summed
// through distributed shared memory (SPLIT) or sharing A's rows between two adjacent tiles by TMA multicast (SHARE_A);
// 13 wherever the plan picks neither.
// Where does 1024^3 go (issue 31: 88 % of cuBLAS on the H200 for 11, the best walk-D stage there)? 11's and 12's plan
// runs it as 128 tiles of 128 x 64 on 128 of 132 SMs, whole K: 16 k tiles of four m64n64k16 a consumer warpgroup, each
// SM loading 16 x 24 KB (A re-read for each of 16 tile columns: 48 MB through L2 in all). Nsight Compute on the H200
// (one launch, 1024^3 BF16): 11 9.28 us, tensor pipe 32 % of active cycles, issue slots 28 %, memory throughput 31 %:
// latency-bound, nothing saturated. cuBLAS there (7.39 us, tensor pipe 42 %) runs nvjet_sm90_tss_128x64_64x8_1x2: the
// same 128 x 64 tiles and 64-deep k tiles, 8 stages, in clusters of 1 x 2.
// - SPLIT, tried first for 1024^3: 64 tiles of 128 x 128, each tile's K halved between the cluster's two CTAs (128
//   CTAs of 8 k tiles of m64n128k16, 32 MB through L2), the halves meeting in shared memory: consumer warpgroup c of CTA
//   r sends its 64 x 128 partial to the peer with st.async when c != r (the bytes complete the peer's mbarrier as a TMA
//   load's do) and adds the peer's and stores C when c == r. No workspace, no fence to global memory, no counter, and
//   the same sum whichever CTA finishes first. At 1024^3 it lost (H200: 74 % of cuBLAS against 11's 87 %, ncu 11.7 us:
//   the 8 k tiles a CTA do not pay for the exchange and the cluster's start); at 128 tokens, where a CTA walks 28 to
//   224 k tiles, it won by a wide margin over 13's swapped tiles and workspace fix-up (128 x 4096 x 4096: 75 -> 120 %,
//   128 x 3584 x 3584: 55 -> 88 %, 128 x 8192 x 8192: 68 -> 94 %; geometric mean of the 12 LLM shapes at M = 128:
//   73.5 -> 86 %, walk D's best stage 74.4 -> 87 %). So the plan takes SPLIT at 65-128 tokens.
// - SHARE_A, cuBLAS's layout for 1024^3: the cluster's CTAs take tile columns 2p and 2p + 1 of one tile row; each
//   loads its 64 x 64 box of B and half of the 128 rows of A (four 16-row boxes of TMA_A, 13's map), multicast into
//   both, so A crosses L2 -> SM once for two tiles: 16 KB a k tile a CTA where 11 moves 24 KB (32 MB through L2, not
//   48). 06's protocol along N: every consumer warp releases a stage on both CTAs' empty barriers.
// Bodies: kernels/common/cluster_pair.cuh (run_split, run_shared_a); 13's: swapped.cuh and host_plan.cuh.
// The plan (kernels/hopper_d/cluster_plan.py, on the host as 11-13): SPLIT = 128 or 64 (its tile width) at 65-128
// tokens, SHARE_A = 1 above 128 tokens where 12's plan is 64-wide tiles walked whole, else 13's arguments (TN, BNT,
// SLICES up to 128 tokens: the swapped product; WIDTH, DP, SK above: 12). The grid is 13's rounded to even (clusters
// of 2); 13's paths run unchanged in clusters.
// Predicted (H200): 1024^3 from 11's 87-88 % of cuBLAS to 90-95 % (A's L2 traffic cut by a third, cuBLAS's own
// layout); 128 tokens as SPLIT measured; elsewhere 13's numbers.
// N % 8 == 0, K % 8 == 0, any M.
#include "cluster_pair.cuh"
#include "host_plan.cuh"
#include "swapped.cuh"

// 13's persistent grid (kernels/sources.py): one block per SM wherever ceil(N / 8) x ceil(M / 16) allows, in clusters of
// 2; BM is TMA_A's box rows (the swap's, and SHARE_A's A boxes). Dynamic shared memory: 12's ring and staging space,
// which holds the swap's ring, SHARE_A's, and SPLIT's ring and receive buffer.
enum : int { BM = 16, BN = 8, CLUSTER = 2, SMEM_BYTES = persistent_ws::SMEM_BYTES + tma_store::BYTES };
static_assert(SMEM_BYTES >= swapped::RING_BYTES, "the swapped ring fits");
static_assert(SMEM_BYTES >= cluster_pair::RECV_OFFSET + cluster_pair::RECV_BYTES, "the split's receive buffer fits");

// SPLIT: 128 or 64 (a split pair's tile width) or 0; SHARE_A: 1 for 128 x 64 tile pairs sharing A; else 13's path on
// TN, BNT, SLICES (up to 128 tokens) or WIDTH, DP, SK (above); all from kernels/hopper_d/cluster_plan.py.
template <typename T>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(persistent_ws::THREADS, 1)
d_cluster_pair(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
               const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int SPLIT,
               int SHARE_A, int TN, int BNT, int SLICES, int WIDTH, int DP, int SK) {
    const swapped::Bit16<T> ops{};
    if (SPLIT == 128) cluster_pair::run_split<T, 128>(tma_a128, tma_b, C, M, N, K);
    else if (SPLIT == 64) cluster_pair::run_split<T, 64>(tma_a128, tma_b, C, M, N, K);
    else if (SHARE_A) cluster_pair::run_shared_a<T>(tma_a, tma_b, C, M, N, K);
    else if (TN == 16) swapped::run_planned<16>(ops, tma_a, tma_b, C, W, stream_k::arrivals, M, N, K, BNT, SLICES);
    else if (TN == 64) swapped::run_planned<64>(ops, tma_a, tma_b, C, W, stream_k::arrivals, M, N, K, BNT, SLICES);
    else if (TN == 128) swapped::run_planned<128>(ops, tma_a, tma_b, C, W, stream_k::arrivals, M, N, K, BNT, SLICES);
    else host_plan::run<T, true>(tma_a128, tma_b, &tma_c, C, W, M, N, K, WIDTH, DP, SK);
}
