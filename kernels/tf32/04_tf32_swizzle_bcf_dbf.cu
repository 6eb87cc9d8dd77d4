// 04 tf32_swizzle_bcf_dbf: tf32_swizzle_bcf with two shared-memory stages.
// With every global byte moved by cp.async, double buffering needs no staging
// registers: while the warps run the mma of tile kt from one stage, the copies
// of tile kt+1 fill the other, so the global latency overlaps the tensor cores
// instead of following a barrier. One barrier per tile: at the top of iteration
// kt, tile kt's copies are waited for (the only group in flight) and made
// visible, and every thread has finished reading the other stage (tile kt-1),
// which is refilled right after. 32 KB of shared memory, still two blocks per SM.
// Tiles, swizzles, fragments, grid swizzle and TF32 rounding (cvt.rna) as in
// tf32_swizzle_bcf.
#include "column_strips.cuh"
#include "mma_tf32.cuh"
#include "ptx.cuh"

constexpr int BM = 128, BN = 128, BK = 16, THREADS = 256;
constexpr int A_OFF = 0, B_OFF = BM * BK;  // per stage: As[m][k] 128 x 16, then Bs[k][n] 16 x 128 (swizzled)
constexpr int STAGE_FLOATS = (BM + BN) * BK;

// Word index of A(row, col) in the swizzled 128 x 16 tile (see 01_tf32_bt_swizzle.cu).
__device__ __forceinline__ int a_word(int row, int col) {
    const int s = (((row >> 1) ^ (row >> 3)) & 3) | (row & 4);
    return (row * BK + col) ^ (s << 2);
}
// Word index of B(k, n) in the 16 x 128 tile: k % 4 XORed into n's bits 3..4.
__device__ __forceinline__ int b_word(int k, int n) { return k * BN + (n ^ ((k & 3) << 3)); }

extern "C" __global__ void __launch_bounds__(THREADS, 2)
tf32_swizzle_bcf_dbf(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(128) float smem[2 * STAGE_FLOATS];
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

    // Copies tile (k0) into a stage; the tile origins move on by one tile per call.
    auto load_tile = [&](int k0, int stage) {
        const int s_off = stage * STAGE_FLOATS;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const bool a_ok = a_row_ok[i] && k0 + 4 * a_c < K;
            cp_async_16(&smem[s_off + a_dst + 1024 * i], a_ok ? a_tile + (a_off + 64 * i * K) : A, a_ok);
            const bool b_ok = b_col_ok && k0 + warp + 8 * i < K;
            cp_async_16(&smem[s_off + b_dst + 1024 * i], b_ok ? b_tile + (b_off + 8 * i * N) : B, b_ok);
        }
        a_tile += BK;
        b_tile += (size_t)BK * N;
    };
    float acc[4][4][4] = {};
    auto compute = [&](int stage) {
        const int s_off = stage * STAGE_FLOATS;
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) {
            unsigned b[4][2];
#pragma unroll
            for (int ni = 0; ni < 4; ++ni)
#pragma unroll
                for (int h = 0; h < 2; ++h) b[ni][h] = to_tf32(smem[s_off + (b_frag ^ (8 * ni)) + 1024 * ks + 512 * h]);
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {
                unsigned a[4];
                ldmatrix_x4(a, s_base + 4 * (s_off + A_OFF + ((a_frag ^ (((mi ^ ks) & 1) << 3)) + 256 * mi)));
#pragma unroll
                for (int r = 0; r < 4; ++r) a[r] = to_tf32(__uint_as_float(a[r]));
#pragma unroll
                for (int ni = 0; ni < 4; ++ni) mma_tf32_16x8x8(acc[mi][ni], a, b[ni]);
            }
        }
    };

    const int KT = (K + BK - 1) / BK;
    if (KT > 0) {
        load_tile(0, 0);
        cp_async_commit();
    }
    for (int kt = 0; kt < KT; ++kt) {
        const int stage = kt & 1;
        cp_async_wait<0>();  // the only group in flight is tile kt's
        __syncthreads();     // tile kt visible to all; every thread is past its reads of tile kt-1
        if (kt + 1 < KT) {
            load_tile((kt + 1) * BK, stage ^ 1);
            cp_async_commit();
        }
        compute(stage);
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
