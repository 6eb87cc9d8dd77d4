// 11 ldg_wider2: 10 (float4 loads + supertile remap) with the block tile
// doubled again along M to 256x64, still 256 threads, so each thread computes
// a 16x4 block (64 sums: rows ty + 16i, columns 4tx .. 4tx+3). Per k a thread
// now does 64 FMAs for 16 LDS.32 + 1 LDS.128, and every B tile serves 256 rows.
// BK drops to 16 so the float4 load temporaries fit beside the 64 sums under
// __launch_bounds__(256, 2) (<= 128 registers, two blocks per SM) on every arch.
// Dynamic shared memory: (256*17 + 16*64) * 4 = 21,504 bytes per block.
#include "simt_tiles.cuh"
#include "supertile.cuh"

constexpr int BM = 256, BN = 64, BK = 16, TM = 16, TN = 4, THREADS = 256;
constexpr int AS_LD = BK + 1;
enum : int { SMEM_BYTES = (BM * AS_LD + BK * BN) * 4 };  // As[BM][AS_LD] then Bs[BK][BN], dynamic

extern "C" __global__ void __launch_bounds__(THREADS, 2)
sgemm_ldg_wider2(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(16) float smem[];
    float (*As)[AS_LD] = reinterpret_cast<float (*)[AS_LD]>(smem);
    float (*Bs)[BN] = reinterpret_cast<float (*)[BN]>(smem + BM * AS_LD);  // 17,408 bytes in: 16-byte aligned
    const int t = threadIdx.x;
    const int tx = t % 16, ty = t / 16;
    int tile_row, tile_col;
    supertile_4x4(tile_row, tile_col);
    const int row0 = tile_row * BM, col0 = tile_col * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int l = 0; l < BM * BK / 4 / THREADS; ++l) {
            const int id = t + THREADS * l, r = id / (BK / 4), c = id % (BK / 4) * 4;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (row0 + r < M && k0 + c < K) v = *reinterpret_cast<const float4*>(&A[(size_t)(row0 + r) * K + k0 + c]);
            As[r][c] = v.x; As[r][c + 1] = v.y; As[r][c + 2] = v.z; As[r][c + 3] = v.w;
        }
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
