// 06 warptile: a level between the block and the thread. The 128 x 128 block
// tile (BK = 16, 128 threads) is split into four 64 x 64 warp tiles, each swept
// by its warp in 16 x 32 sub-tiles of 4 x 4 per lane (128 sums per thread). A
// warp's shared-memory reads per k are then 4 + 2 conflict-free LDS.128 for 128
// FFMA (05: 4 LDS.128 for 64, its lanes 32 bytes apart), A's transposing stores hit
// 32 banks (As rows padded to BM + 4), and each warp's C stores are four full
// 128-byte lines. The kernel body is shared with the half-precision port and
// the tuning stages: common/walkc_warptile.cuh. N % 4 == 0 and K % 4 == 0.
#include "walkc_warptile.cuh"

// Template over the tile so the tuning stages (kernels/tuning.py) reuse it:
// BM x BN x BK block, WM x WN warp, STAGES 1 (single buffer) or 2 (register-staged double buffer).
// (min 1 block per SM: without it ptxas aims at 128 registers for some tiles and spills)
template <int BM, int BN, int BK, int WM, int WN, int STAGES>
__global__ void __launch_bounds__(32 * (BM / WM) * (BN / WN), 1)
c_warptile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(16) float smem[];
    warptile_gemm<float, BM, BN, BK, WM, WN, STAGES>(A, B, C, M, N, K, smem);
}
