// 03 wmma_dbuf: 02 with two shared-memory buffers. The global loads of tile
// kt+1 are issued into registers before tile kt's fragments are computed and
// written to the other buffer after them, so the copy's latency hides behind
// the tensor-core work and one barrier per k step replaces two. Same 128 x 128
// x 32 tile and 64 x 32 warps as 02 in the ladder stage; the template over
// (BM, BN, BK, WM, WN) serves the tuning stages (kernels/tuning.py). Dynamic
// shared memory (2 stages). Any M; N % 8 == 0 and K % 8 == 0.
#include "walkc_wmma.cuh"

// (min 1 block per SM: without it ptxas aims at 128 registers for some tiles and spills)
template <typename T, int BM, int BN, int BK, int WM, int WN>
__global__ void __launch_bounds__(32 * (BM / WM) * (BN / WN), 1)
h_wmma_dbuf(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using namespace walkc;
    using L = WmmaTile<BM, BN, BK, WM, WN>;
    extern __shared__ __align__(128) unsigned char smem[];
    T* tile = reinterpret_cast<T*>(smem);
    const int warp = threadIdx.x / 32, wr = warp / L::WARPS_N, wc = warp % L::WARPS_N;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    FragC acc[L::FM][L::FN];
    zero_acc(acc);
    TileCopy<T, BM, BN, BK, WM, WN> copy;
    copy.load(A, B, M, N, K, row0, col0, 0);
    copy.store(tile);
    __syncthreads();
    const int KT = (K + BK - 1) / BK;
    for (int kt = 0; kt < KT; ++kt) {
        const T* cur = tile + (kt & 1) * L::STAGE_ELEMS;
        // Buffer (kt+1)&1 was last read in iteration kt-1, which ended with a barrier.
        if (kt + 1 < KT) copy.load(A, B, M, N, K, row0, col0, (kt + 1) * BK);
        warp_mma<T, BK, L::LDA, L::LDB>(acc, cur + wr * WM * L::LDA, cur + L::A_ELEMS + wc * WN);
        if (kt + 1 < KT) copy.store(tile + ((kt + 1) & 1) * L::STAGE_ELEMS);
        __syncthreads();
    }
    store_acc(acc, C, M, N, row0 + wr * WM, col0 + wc * WN, reinterpret_cast<float*>(smem) + 256 * warp);
}
