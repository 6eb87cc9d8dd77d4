// 00 simt_warptile: c_warptile (simt_fp32_c/06) ported to 16-bit inputs, no
// tensor cores. Same 128 x 128 x 16 block, 64 x 64 warps, 4 x 4 per lane; only
// the copy changes: a 16-byte global load now brings 8 fp16/bf16 values, which
// are widened to FP32 on their way into shared memory (a warp copies 32 rows
// of A, one chunk each, so the transposing stores stay conflict free). The inner
// loop is the FP32 one: products of 16-bit values are exact in FP32, and this
// stage shows what halving the bytes buys without tensor cores. One template
// for both input types (and the tile, like 06). N % 8 == 0 and K % 8 == 0.
#include "walkc_warptile.cuh"

// (min 1 block per SM: without it ptxas aims at 128 registers for some tiles and spills)
template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES>
__global__ void __launch_bounds__(32 * (BM / WM) * (BN / WN), 1)
h_simt_warptile(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(16) float smem[];
    warptile_gemm<T, BM, BN, BK, WM, WN, STAGES>(A, B, C, M, N, K, smem);
}
