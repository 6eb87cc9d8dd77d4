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
#include "tf32_tiles.cuh"

constexpr int BM = 128, BN = 128, BK = 16, THREADS = 256;
constexpr int A_OFF = 0, B_OFF = BM * BK;  // As[m][k] 128 x 16 (swizzled), then Bs[k][n] 16 x 128 (swizzled)
constexpr int SMEM_FLOATS = (BM + BN) * BK;

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
    // Chunk i lands at a_dst + 1024 i and b_dst + 1024 i (row + 64 keeps S(row); k + 8 keeps k % 4).
    const int a_dst = A_OFF + swizzled_128x16_word(a_r, 4 * a_c), b_dst = B_OFF + swizzled_16x128_word(warp, 4 * lane);

    // ldmatrix row addresses for A as in tf32_bt_swizzle_dbf (swizzled_a_frag_word). B loads (b0, b1 = h 0, 1):
    // B_OFF + word(8 ks + 4 h + tq, 32 warp_n + 8 ni + g) = (b_frag ^ (8 ni)) + 1024 ks + 512 h, since
    // b_frag = B_OFF + word(tq, 32 warp_n + g) holds tq in n's bits 3..4 (lds_swizzled_b_frags_tf32).
    const int warp_m = warp / 4, warp_n = warp % 4, g = lane / 4, tq = lane % 4;
    const unsigned s_base = smem_u32(smem);
    const int a_frag = swizzled_128x16_word(warp_m * 64 + lane % 16, 4 * (lane / 16));
    const int b_frag = B_OFF + swizzled_16x128_word(tq, warp_n * 32 + g);

    float acc[4][4][4] = {};
    const int KT = (K + BK - 1) / BK;
    for (int kt = 0; kt < KT; ++kt) {
        const int k0 = kt * BK;
        cp_async_tiles_bcf(smem, 0, a_dst, b_dst, A, B, a_tile, b_tile, a_off, b_off, a_row_ok, b_col_ok, a_c, warp, k0, N, K);
        cp_async_commit();
        cp_async_wait<0>();
        __syncthreads();

        unsigned b[4][2], a[4];
        mma_warp_tile_64x32_k16(
            acc, b, a, [&](unsigned (&b)[4][2], int ks) { lds_swizzled_b_frags_tf32(b, smem, 0, b_frag, ks); },
            [&](int mi, int ks) { return s_base + 4 * (A_OFF + swizzled_a_frag_word(a_frag, mi, ks)); });
        __syncthreads();
    }

    store_c_warp_tile_64x32(C, acc, M, N, row0, col0, warp_m, warp_n, lane);
}
