// 04 tf32_swizzle_bcf_dbf: tf32_swizzle_bcf with two shared-memory stages.
// Every global byte moved by cp.async, double buffering needs no staging registers:
// while the warps run the mma of tile kt from one stage, the copies of tile kt+1 fill
// the other, so the global latency overlaps the tensor cores, not after a barrier. One
// barrier a tile: at its top, tile kt's copies have landed and every thread is done with
// the other stage (tile kt-1), refilled next. 32 KB shared, two blocks an
// SM. Tiles, swizzles, fragments, grid swizzle, TF32 rounding as in 03.
#include "column_strips.cuh"
#include "tf32_tiles.cuh"

constexpr int BM = 128, BN = 128, BK = 16, THREADS = 256;
constexpr int A_OFF = 0, B_OFF = BM * BK;  // per stage: As[m][k] 128 x 16, then Bs[k][n] 16 x 128 (swizzled)
constexpr int STAGE_FLOATS = (BM + BN) * BK;

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
    // Chunk i lands at a_dst + 1024 i and b_dst + 1024 i (row + 64 keeps S(row); k + 8 keeps k % 4).
    const int a_dst = A_OFF + swizzled_128x16_word(a_r, 4 * a_c), b_dst = B_OFF + swizzled_16x128_word(warp, 4 * lane);

    // ldmatrix row addresses for A as in tf32_bt_swizzle_dbf (swizzled_a_frag_word). B loads (b0, b1 = h 0, 1):
    // B_OFF + word(8 ks + 4 h + tq, 32 warp_n + 8 ni + g) = (b_frag ^ (8 ni)) + 1024 ks + 512 h, since
    // b_frag = B_OFF + word(tq, 32 warp_n + g) holds tq in n's bits 3..4 (lds_swizzled_b_frags_tf32).
    const int warp_m = warp / 4, warp_n = warp % 4, g = lane / 4, tq = lane % 4;
    const unsigned s_base = smem_u32(smem);
    const int a_frag = swizzled_128x16_word(warp_m * 64 + lane % 16, 4 * (lane / 16));
    const int b_frag = B_OFF + swizzled_16x128_word(tq, warp_n * 32 + g);

    // Copies tile (k0) into a stage; the tile origins move on by one tile per call. The roles go by
    // reference, as this lambda holds them (see cp_async_tiles_bcf).
    auto load_tile = [&](int k0, int stage) {
        cp_async_tiles_bcf<const int&>(smem, stage * STAGE_FLOATS, a_dst, b_dst, A, B, a_tile, b_tile, a_off, b_off, a_row_ok,
                                       b_col_ok, a_c, warp, k0, N, K);
    };
    float acc[4][4][4] = {};
    auto compute = [&](int stage) {
        const int s_off = stage * STAGE_FLOATS;
        unsigned b[4][2], a[4];
        mma_warp_tile_64x32_k16(
            acc, b, a, [&](unsigned (&b)[4][2], int ks) { lds_swizzled_b_frags_tf32(b, smem, s_off, b_frag, ks); },
            [&](int mi, int ks) { return s_base + 4 * (s_off + A_OFF + swizzled_a_frag_word(a_frag, mi, ks)); });
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

    store_c_warp_tile_64x32(C, acc, M, N, row0, col0, warp_m, warp_n, lane);
}
