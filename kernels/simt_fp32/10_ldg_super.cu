// 10 ldg_super: 09 (float4 global loads, 128x64 tile) plus 08's 4x4 supertile
// block remap, i.e. both L2-side traits at once. Same shape rule as 09.
#include "simt_tiles.cuh"
#include "supertile.cuh"

constexpr int BM = 128, BN = 64, BK = 32, TM = 8, TN = 4, THREADS = 256;
constexpr int AS_LD = BK + 1;
enum : int { SMEM_BYTES = (BM * AS_LD + BK * BN) * 4 };  // As[BM][AS_LD] then Bs[BK][BN], dynamic

extern "C" __global__ void __launch_bounds__(THREADS, 2)
sgemm_ldg_super(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
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
        load_a_f4_spread<BM, BK, THREADS>(As, A, M, K, K, row0, k0, t);
#pragma unroll
        for (int l = 0; l < BK * BN / 4 / THREADS; ++l) {
            const int id = t + THREADS * l, r = id / (BN / 4), c = id % (BN / 4) * 4;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (k0 + r < K && col0 + c < N) v = *reinterpret_cast<const float4*>(&B[(size_t)(k0 + r) * N + col0 + c]);
            *reinterpret_cast<float4*>(&Bs[r][c]) = v;
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
