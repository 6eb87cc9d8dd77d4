// 08 supertile: 07 with the block -> tile mapping remapped (supertile.cuh) so
// that consecutive blocks cover 4x4 squares of C tiles instead of a full tile
// row. Blocks that run at the same time then share 4 row panels of A and 4
// column panels of B, which raises the L2 hit rate; the kernel body is 07's.
#include "simt_tiles.cuh"
#include "supertile.cuh"

constexpr int BM = 128, BN = 64, BK = 32, TM = 8, TN = 4, THREADS = 256;
constexpr int AS_LD = BK + 1;
enum : int { SMEM_BYTES = (BM * AS_LD + BK * BN) * 4 };  // As[BM][AS_LD] then Bs[BK][BN], dynamic

extern "C" __global__ void __launch_bounds__(THREADS, 2)
sgemm_supertile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(16) float smem[];
    float (*As)[AS_LD] = reinterpret_cast<float (*)[AS_LD]>(smem);
    float (*Bs)[BN] = reinterpret_cast<float (*)[BN]>(smem + BM * AS_LD);
    const int t = threadIdx.x;
    const int tx = t % 16, ty = t / 16;
    int tile_row, tile_col;
    supertile_4x4(tile_row, tile_col);
    const int row0 = tile_row * BM, col0 = tile_col * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_a_rows<BM, BK, THREADS>(As, A, M, K, row0, k0, t);
#pragma unroll
        for (int l = 0; l < BK * BN / THREADS; ++l) {
            const int r = t / 64 + 4 * l, c = t % 64;
            Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(size_t)(k0 + r) * N + col0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float4 b;  // register fragment: B columns 4tx .. 4tx+3 of row k
            outer_product_step_b4<16>(acc, b, As, Bs, k, ty, 4 * tx);
        }
        __syncthreads();
    }
    const int c = col0 + 4 * tx;
    store_tile_f4<16>(C, acc, M, N, row0, ty, c);
}
