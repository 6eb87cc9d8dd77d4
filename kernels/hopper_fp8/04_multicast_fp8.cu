// 04 multicast_fp8: walk D's 06 step on 03, clusters of 2 CTAs on vertically adjacent tiles (tile rows 2p and 2p+1,
// same columns), which read the same B rows. A k tile moves 16 KB of A and 32 KB of B into each CTA; here k tile
// kt's B box (256 rows x 128 bytes: the tensor map's box is the whole tile, so it is not halved as in walk D's 06)
// is loaded once, by the CTA of rank kt % 2, and TMA-multicast into both CTAs' shared memory: L2 -> SM traffic per
// k tile falls from 48 KB to 32 KB a CTA on average. A stage may be refilled only when both CTAs' consumers are done
// with it, so every consumer warp arrives on the empty barrier of both CTAs (16 arrivals a phase), with the
// .release.cta arrive walk D's 06 measured (.release.cluster made it 1.6x slower). Both CTAs walk the same tile
// pairs in lockstep; a pair's second tile past M loads zeros and stores nothing.
// N % 8 == 0, K % 16 == 0, any M.
// The kernel's body is kernels/common/persistent_fp8.cuh (KEEP_ONE_IN_FLIGHT = true, CLUSTER = 2).
#include "persistent_fp8.cuh"

namespace f04 {
enum : int { CLUSTER = 2 };
}  // namespace f04

__global__ void __cluster_dims__(f04::CLUSTER, 1, 1) __launch_bounds__(persistent_fp8::THREADS, 1)
f_multicast_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C,
                const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K) {
    persistent_fp8::run<true, f04::CLUSTER>(tma_a, tma_b, C, scale_a, scale_b, M, N, K);
}
