// 03 tf32_swizzle_bcf: B copied with cp.async too, no transpose ("B conflict
// free"), back to a single shared-memory stage (the grid swizzle stays).
// tf32_bt_swizzle_dbf still moves B through registers (LDG, round, 8 STS per
// thread per tile) only to transpose it. Here B lands untransposed with 16-byte
// cp.async, Bs[k][n] 16 x 128, and the B fragment is read with plain 32-bit
// loads: b0 = Bs[8 ks + t][n + g], b1 = Bs[8 ks + 4 + t][n + g] (g = lane / 4,
// t = lane % 4). Unswizzled, the 4 k rows of one load share 8 banks (4-way).
// The swizzle XORs k % 4 into bits 3..4 of n: 16-byte chunks stay whole for
// cp.async, each load's bank is 8 ((n / 8) ^ t) + g mod 32, all 32 distinct, and
// a phase of 8 copies (8 consecutive chunks of one row) permutes within its
// 128 bytes. A (tile, swizzle, ldmatrix) is as in tf32_bt_swizzle. Every global
// byte now travels asynchronously and B needs no staging registers; the cost is
// 8 LDS.32 instead of 4 ldmatrix.x2 per k step, and B is rounded to TF32
// (cvt.rna) after each load instead of once before its store.
// Single buffer: copy, wait, barrier, compute, barrier.
#include "column_strips.cuh"
#include "mma_tf32.cuh"
#include "ptx.cuh"

constexpr int BM = 128, BN = 128, BK = 16, THREADS = 256;
constexpr int A_OFF = 0, B_OFF = BM * BK;  // As[m][k] 128 x 16 (swizzled), then Bs[k][n] 16 x 128 (swizzled)
constexpr int SMEM_FLOATS = (BM + BN) * BK;

// Word index of A(row, col) in the swizzled 128 x 16 tile (see 01_tf32_bt_swizzle.cu).
__device__ __forceinline__ int a_word(int row, int col) {
    const int s = (((row >> 1) ^ (row >> 3)) & 3) | (row & 4);
    return (row * BK + col) ^ (s << 2);
}
// Word index of B(k, n) in the 16 x 128 tile: k % 4 XORed into n's bits 3..4.
__device__ __forceinline__ int b_word(int k, int n) { return k * BN + (n ^ ((k & 3) << 3)); }

extern "C" __global__ void __launch_bounds__(THREADS, 2)
tf32_swizzle_bcf(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(128) float smem[SMEM_FLOATS];
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    int tile_row, tile_col;
    column_strips<8>(tile_row, tile_col);
    const int row0 = tile_row * BM, col0 = tile_col * BN;

    // Copy roles. A: chunk (row a_r + 64 i, k 4 a_c), i < 2, as before. B: chunk (k warp + 8 i, n 4 lane),
    // i < 2: a warp copies one 512-byte row. Tile origins are block-uniform, per-thread offsets 32-bit.
    const int a_r = t / 4, a_c = t % 4;
    const float* a_tile = A + (size_t)row0 * K;
    const float* b_tile = B + col0;
    const int a_off = a_r * K + 4 * a_c, b_off = warp * N + 4 * lane;
    const bool a_row_ok[2] = {row0 + a_r < M, row0 + a_r + 64 < M};
    const bool b_col_ok = col0 + 4 * lane < N;  // N % 4 == 0: the whole chunk is in range
    const int a_dst = A_OFF + a_word(a_r, 4 * a_c), b_dst = B_OFF + b_word(warp, 4 * lane);  // i adds 1024 to either

    // ldmatrix row addresses for A as in tf32_bt_swizzle_dbf: (a_frag ^ (((mi ^ ks) & 1) << 3)) + 256 mi.
    // B loads (b0, b1 = h 0, 1): B_OFF + b_word(8 ks + 4 h + tq, 32 warp_n + 8 ni + g) = (b_frag ^ (8 ni)) +
    // 1024 ks + 512 h, since b_frag = B_OFF + b_word(tq, 32 warp_n + g) holds tq in n's bits 3..4.
    const int warp_m = warp / 4, warp_n = warp % 4, g = lane / 4, tq = lane % 4;
    const unsigned s_base = smem_u32(smem);
    const int a_frag = a_word(warp_m * 64 + lane % 16, 4 * (lane / 16));
    const int b_frag = B_OFF + b_word(tq, warp_n * 32 + g);

    float acc[4][4][4] = {};
    const int KT = (K + BK - 1) / BK;
    for (int kt = 0; kt < KT; ++kt) {
        const int k0 = kt * BK;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const bool a_ok = a_row_ok[i] && k0 + 4 * a_c < K;
            cp_async_16(&smem[a_dst + 1024 * i], a_ok ? a_tile + (a_off + 64 * i * K) : A, a_ok);
            const bool b_ok = b_col_ok && k0 + warp + 8 * i < K;
            cp_async_16(&smem[b_dst + 1024 * i], b_ok ? b_tile + (b_off + 8 * i * N) : B, b_ok);
        }
        a_tile += BK;
        b_tile += (size_t)BK * N;
        cp_async_commit();
        cp_async_wait<0>();
        __syncthreads();

#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) {
            unsigned b[4][2];
#pragma unroll
            for (int ni = 0; ni < 4; ++ni)
#pragma unroll
                for (int h = 0; h < 2; ++h) b[ni][h] = to_tf32(smem[(b_frag ^ (8 * ni)) + 1024 * ks + 512 * h]);
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {
                unsigned a[4];
                ldmatrix_x4(a, s_base + 4 * (A_OFF + ((a_frag ^ (((mi ^ ks) & 1) << 3)) + 256 * mi)));
#pragma unroll
                for (int r = 0; r < 4; ++r) a[r] = to_tf32(__uint_as_float(a[r]));
#pragma unroll
                for (int ni = 0; ni < 4; ++ni) mma_tf32_16x8x8(acc[mi][ni], a, b[ni]);
            }
        }
        __syncthreads();
    }

    // C fragment: lane holds rows g and g + 8, columns 2t and 2t + 1 of each 16x8 tile.
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) {
        const int r = row0 + warp_m * 64 + mi * 16 + g;
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            const int c = col0 + warp_n * 32 + ni * 8 + 2 * tq;  // even, and N % 4 == 0: c < N covers c + 1
            if (c < N) {
                if (r < M) *reinterpret_cast<float2*>(&C[(size_t)r * N + c]) = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
                if (r + 8 < M) *reinterpret_cast<float2*>(&C[(size_t)(r + 8) * N + c]) = make_float2(acc[mi][ni][2], acc[mi][ni][3]);
            }
        }
    }
}
