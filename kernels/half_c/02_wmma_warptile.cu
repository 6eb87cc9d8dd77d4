// 02 wmma_warptile: 01's fragments fed from shared memory with the warptile
// hierarchy of simt_fp32_c/06. A 128 x 128 block tile, BK = 32, 8 warps of
// 64 x 32 (4 x 2 fragments, 8 accumulators per warp). Each k step the block
// copies A and B tiles (16-byte chunks, zero-filled at the edges) into padded
// shared memory, then every warp loads 4 A and 2 B fragments per 16-wide k
// slice and issues 8 mma_sync: each fragment is reused 2 or 4 times from
// registers and each global element is fetched once per block. Load, barrier,
// compute, barrier: nothing overlaps the copy yet (03). Accumulators leave
// through shared memory with guarded float4 stores (common/walkc_wmma.cuh), so
// any M works; N % 8 == 0 and K % 8 == 0.
#include "walkc_wmma.cuh"

enum : int { BM = 128, BN = 128, BK = 32, WM = 64, WN = 32, THREADS = 32 * (BM / WM) * (BN / WN) };

template <typename T>
__global__ void __launch_bounds__(THREADS)
h_wmma_warptile(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using namespace walkc;
    using L = WmmaTile<BM, BN, BK, WM, WN>;
    __shared__ __align__(128) unsigned char smem[L::smem_bytes(1)];
    T* tile = reinterpret_cast<T*>(smem);
    const int warp = threadIdx.x / 32, wr = warp / L::WARPS_N, wc = warp % L::WARPS_N;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    FragC acc[L::FM][L::FN];
    zero_acc(acc);
    TileCopy<T, BM, BN, BK, WM, WN> copy;
    for (int k0 = 0; k0 < K; k0 += BK) {
        copy.load(A, B, M, N, K, row0, col0, k0);
        copy.store(tile);
        __syncthreads();
        warp_mma<T, BK, L::LDA, L::LDB>(acc, tile + wr * WM * L::LDA, tile + L::A_ELEMS + wc * WN);
        __syncthreads();  // also frees the tile for store_acc's scratch
    }
    store_acc(acc, C, M, N, row0 + wr * WM, col0 + wc * WN, reinterpret_cast<float*>(smem) + 256 * warp);
}
