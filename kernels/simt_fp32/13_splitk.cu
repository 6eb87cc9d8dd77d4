// 13 splitk: split-K on top of 09 (128x64 tile, 256 threads, float4 loads and
// stores). Small grids leave SMs idle; slicing K over gridDim.z multiplies the
// block count. Launch 1 (sgemm_splitk_partial): block z sums its K slice
// (ceil(K / splits) rounded up to BK) and writes the partial tile to
// W[z][M][N]; a slice past the end of K writes zeros, so all of W is written.
// Launch 2 (sgemm_splitk_reduce): C = sum over z of W[z], in a fixed order, one
// float4 per thread, one row chunk of 1024 columns per block. Needs K % 4 == 0
// and N % 4 == 0; the workspace is splits * M * N floats.
#include "simt_tiles.cuh"

constexpr int BM = 128, BN = 64, BK = 32, TM = 8, TN = 4, THREADS = 256;
constexpr int AS_LD = BK + 1;
enum : int { SMEM_BYTES = (BM * AS_LD + BK * BN) * 4 };  // As[BM][AS_LD] then Bs[BK][BN], dynamic
// The reduction: one float4 per thread, a block covers 1 row x 1024 columns.
enum : int { REDUCE_THREADS = 256, REDUCE_BM = 1, REDUCE_BN = 4 * REDUCE_THREADS };

extern "C" __global__ void __launch_bounds__(THREADS, 2)
sgemm_splitk_partial(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ W, int M, int N, int K) {
    extern __shared__ __align__(16) float smem[];
    float (*As)[AS_LD] = reinterpret_cast<float (*)[AS_LD]>(smem);
    float (*Bs)[BN] = reinterpret_cast<float (*)[BN]>(smem + BM * AS_LD);
    const int t = threadIdx.x;
    const int tx = t % 16, ty = t / 16;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int splits = gridDim.z, z = blockIdx.z;
    const int per_slice = ((K + splits - 1) / splits + BK - 1) / BK * BK;
    const int k_begin = z * per_slice;
    const int k_end = min(K, k_begin + per_slice);  // may be <= k_begin: empty slice
    float acc[TM][TN] = {};
    for (int k0 = k_begin; k0 < k_end; k0 += BK) {
        // Guards use k_end, not K, so a tile never reads into the next slice.
        load_a_f4_spread<BM, BK, THREADS>(As, A, M, K, k_end, row0, k0, t);
#pragma unroll
        for (int l = 0; l < BK * BN / 4 / THREADS; ++l) {
            const int id = t + THREADS * l, r = id / (BN / 4), c = id % (BN / 4) * 4;
            float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (k0 + r < k_end && col0 + c < N) v = *reinterpret_cast<const float4*>(&B[(size_t)(k0 + r) * N + col0 + c]);
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
    float* Wz = W + (size_t)z * M * N;
    const int c = col0 + 4 * tx;
    store_tile_f4<16>(Wz, acc, M, N, row0, ty, c);
}

extern "C" __global__ void __launch_bounds__(REDUCE_THREADS)
sgemm_splitk_reduce(const float* __restrict__ W, float* __restrict__ C, int M, int N, int SPLITS) {
    const int r = blockIdx.y;
    const int c = (blockIdx.x * REDUCE_THREADS + threadIdx.x) * 4;
    if (r >= M || c >= N) return;
    const size_t at = (size_t)r * N + c, slice = (size_t)M * N;
    float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int z = 0; z < SPLITS; ++z) {
        const float4 v = *reinterpret_cast<const float4*>(&W[z * slice + at]);
        s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    *reinterpret_cast<float4*>(&C[at]) = s;
}
