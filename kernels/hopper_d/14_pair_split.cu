// 14 pair_split: K split in two between the two CTAs of a cluster, the halves summed through distributed shared
// memory; 13 wherever its plan is cheaper. Where does 1024^3 go (issue 31: 88 % of cuBLAS on the H200 for 11, the
// best walk-D stage there)? 11's and 12's plan runs it as 128 tiles of 128 x 64 on 128 of 132 SMs, whole K: 16 k tiles
// of four m64n64k16 a consumer warpgroup. Each SM then loads 16 x 24 KB = 384 KB (A re-read for each of 16 tile
// columns, 48 MB through L2 in all), and a 64-wide wgmma reads as much A from shared memory as a 128-wide one for half
// the math; ncu on 07 (the same tiles) found neither the tensor pipe (29 % of active cycles) nor memory (34 %) busy:
// a latency-bound k loop fed at 24 KB a k tile. 128 x 128 tiles halve A's re-reads but are 64 tiles, half the chip
// (02's 62 %); split K in two through a workspace (08) and the fix-up's stores, fences, counter and reloads through
// L2 cost more than they save (08's 1024^3 plan of 128 x 128 x 2 ran at 39 %).
// Here the two halves of a 128 x 128 tile run on the two CTAs of a cluster (__cluster_dims__ 2): 64 tiles x 2 = 128
// CTAs, each 8 k tiles of m64n128k16 (32 KB a k tile, 256 KB a CTA: two thirds of 11's; 32 MB through L2). The halves
// meet in shared memory: consumer warpgroup c of CTA r owns rows 64c.. of the tile when c == r, else it sends its
// 64 x 128 partial (32 KB) to the peer with st.async, whose bytes complete the peer's mbarrier as a TMA load's do; the
// owner adds and stores. No workspace, no fence to global memory, no counter, and the sum is the same whichever CTA
// finishes first. The cluster barrier that guards the peer's mbarriers is arrived at after the setup and waited on
// only after the first k loop, so nothing is added before the first load (11's lesson). Body:
// kernels/common/pair_split.cuh.
// The plan (kernels/hopper_d/pair_plan.py, on the host as 11-13): PAIR = 128 or 64 (the tile width of the split) where
// those pairs fill the grid in one wave and 13's plan would leave it partly idle or walk narrower tiles; otherwise
// PAIR = 0 and the block runs 13 on 13's plan (TN, BNT, SLICES up to 128 tokens: the swapped product; WIDTH, DP, SK
// above: 12). In clusters of 2 the grid is 13's rounded to even.
// Predicted (H200, H100): 1024^3 from 11's 88 % (H200) / 92-94 % (H100) of cuBLAS to 93-97 %: the k loop fed at two
// thirds of the L2 traffic by wider wgmmas, less the 32 KB exchange; elsewhere 13's numbers.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"
#include "pair_split.cuh"
#include "swapped.cuh"

// 13's persistent grid (kernels/sources.py): one block per SM wherever ceil(N / 8) x ceil(M / 16) allows, in clusters of
// 2; BM is TMA_A's box rows (the swap's). Dynamic shared memory: 12's ring and staging space, which holds the swap's
// ring, and pair_split's ring and receive buffer.
enum : int { BM = 16, BN = 8, CLUSTER = 2, SMEM_BYTES = persistent_ws::SMEM_BYTES + tma_store::BYTES };
static_assert(SMEM_BYTES >= swapped::RING_BYTES, "the swapped ring fits");
static_assert(SMEM_BYTES >= pair_split::RECV_OFFSET + pair_split::RECV_BYTES, "the pair's receive buffer fits");

// PAIR: 128 or 64 (a split pair's tile width), or 0: 13's path on TN, BNT, SLICES (up to 128 tokens) or WIDTH, DP, SK
// (above); all from kernels/hopper_d/pair_plan.py.
template <typename T>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(persistent_ws::THREADS, 1)
d_pair_split(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
             const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int PAIR,
             int TN, int BNT, int SLICES, int WIDTH, int DP, int SK) {
    const swapped::Bit16<T> ops{};
    if (PAIR == 128) pair_split::run<T, 128>(tma_a128, tma_b, C, M, N, K);
    else if (PAIR == 64) pair_split::run<T, 64>(tma_a128, tma_b, C, M, N, K);
    else if (TN == 16) swapped::run_planned<16>(ops, tma_a, tma_b, C, W, stream_k::arrivals, M, N, K, BNT, SLICES);
    else if (TN == 64) swapped::run_planned<64>(ops, tma_a, tma_b, C, W, stream_k::arrivals, M, N, K, BNT, SLICES);
    else if (TN == 128) swapped::run_planned<128>(ops, tma_a, tma_b, C, W, stream_k::arrivals, M, N, K, BNT, SLICES);
    else host_plan::run<T, true>(tma_a128, tma_b, &tma_c, C, W, M, N, K, WIDTH, DP, SK);
}
