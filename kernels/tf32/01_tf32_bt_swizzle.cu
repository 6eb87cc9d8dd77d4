// 01 tf32_bt_swizzle: XOR swizzles make every shared-memory access of the tf32_bt
// tile conflict-free (it had 4-way ldmatrix and 8-way transposing stores).
// Both tiles are 128 rows x 16 floats; two rows fill one 128-byte line (32 banks)
// and word-index bits 2..4 select the 16-byte chunk in it. Those three bits are
// XORed with S(row) = (r1 ^ r3, r2 ^ r4, r2) (bit 0 first; r_i = bit i of row),
// so a chunk may move to the other row of its pair but stays 16-byte whole.
//  - ldmatrix phase (8 rows r..r+7, r % 8 == 0, one chunk c): the chunk bits
//    become (c0 ^ r1 ^ r3, c1 ^ r2 ^ r4, r0 ^ r2), a bijection of (r0, r1, r2), so
//    the 8 rows hit 8 different bank quads (A .x4 and B .x2 alike). Rows 1, 2
//    alone would do for this; r3, r4 and the row-pair bit are for the stores.
//  - Transposing stores of B: one instruction stores n = 4 (lane % 8) + j and
//    k = lane / 8 (+ a multiple of 4). Bank bits 0..1 are k % 4 = lane / 8 and
//    bits 2..4 are (c0 ^ j1 ^ n3, c1 ^ n2 ^ n4, j0 ^ n2), a bijection of n's bits
//    2..4 = lane % 8, so all 32 lanes hit distinct banks. (The warp's load map,
//    4 k rows x 32 n rather than 1 x 128, is what makes the r3/r4 terms enough.)
//  - cp.async of A: a phase of 8 lanes writes the 4 chunks of rows 2p and 2p+1,
//    which share S, so they stay a permutation of one 128-byte line.
// The fragment and store addresses use the swizzle's bit structure (comments
// below) so that fewer of them stay live in registers. TF32 rounding as in
// tf32_bt (cvt.rna).
#include "tf32_tiles.cuh"

constexpr int BM = 128, BN = 128, BK = 16, THREADS = 256;
constexpr int A_OFF = 0, B_OFF = BM * BK;  // As[m][k] 128 x 16, then Bs[n][k] 128 x 16: 16 KB
constexpr int SMEM_FLOATS = (BM + BN) * BK;

extern "C" __global__ void __launch_bounds__(THREADS, 2)
tf32_bt_swizzle(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(128) float smem[SMEM_FLOATS];
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    // Copy roles. A: chunk (row a_r + 64 i, k 4 a_c .. +3), i < 2; a warp copies 8 rows x 64 bytes.
    // B: float4 (k b_k + 8 i, n 4 b_n .. +3), i < 2; a warp loads 4 k rows x 128 contiguous bytes.
    const int a_r = t / 4, a_c = t % 4;
    const int b_n = lane % 8 + 8 * (warp % 4), b_k = lane / 8 + 4 * (warp / 4);
    // The tile's origin (a_tile, b_tile) is block-uniform and moves one tile per k step; a thread adds
    // its 32-bit offset (< 128 K, < 16 N), which keeps 64-bit math off the per-thread path.
    const float* a_tile = A + (size_t)row0 * K;
    const float* b_tile = B + col0;
    const int a_off = a_r * K + 4 * a_c, b_off = b_k * N + 4 * b_n;
    const bool a_row_ok[2] = {row0 + a_r < M, row0 + a_r + 64 < M};
    const bool b_col_ok = col0 + 4 * b_n < N;  // N % 4 == 0: the whole float4 is in range

    // Transposing stores: word(4 b_n + j, b_k + 8 i) = b_store ^ (16 j) ^ ((j >> 1) << 2) ^ (8 i) (swizzled_bt_store_word):
    // the bit fields of n and k do not overlap and S(n) only changes by j's bit 1 (one live address instead of eight).
    const int b_store = swizzled_128x16_word(4 * b_n, b_k);

    // Compute roles: warp (warp_m, warp_n) owns C rows 64 warp_m .. +63, columns 32 warp_n .. +31.
    // ldmatrix row addresses (tile words). A .x4: lane -> row 64 warp_m + 16 mi + lane % 16, k 8 ks + 4 (lane / 16);
    // B .x2: lane -> column 32 warp_n + 8 ni + lane % 8, k 8 ks + 4 ((lane / 8) % 2). mi, ni and ks only set row
    // bits 3..5 and column bit 3, which the swizzle turns into XORs of bits 2..3 plus a row offset:
    //   A: (a_frag ^ (((mi ^ ks) & 1) << 3)) + 256 mi,   B: (b_frag ^ ((ni ^ 2 ks) << 2)) + 128 ni.
    const int warp_m = warp / 4, warp_n = warp % 4;
    const unsigned s_base = smem_u32(smem);
    const int a_frag = swizzled_128x16_word(warp_m * 64 + lane % 16, 4 * (lane / 16));
    const int b_frag = swizzled_128x16_word(warp_n * 32 + lane % 8, 4 * ((lane / 8) % 2));

    float acc[4][4][4] = {};
    const int KT = (K + BK - 1) / BK;
    for (int kt = 0; kt < KT; ++kt) {
        const int k0 = kt * BK;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const bool ok = a_row_ok[i] && k0 + 4 * a_c < K;
            cp_async_16(&smem[A_OFF + swizzled_128x16_word(a_r + 64 * i, 4 * a_c)], ok ? a_tile + (a_off + 64 * i * K) : A, ok);
        }
        a_tile += BK;
        cp_async_commit();
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const bool ok = b_col_ok && k0 + b_k + 8 * i < K;
            const float4 v = ok ? __ldg(reinterpret_cast<const float4*>(b_tile + (b_off + 8 * i * N))) : make_float4(0.f, 0.f, 0.f, 0.f);
            const float e[4] = {v.x, v.y, v.z, v.w};
            store_tf32_transposed(smem, e, [&](int j) { return B_OFF + swizzled_bt_store_word(b_store, i, j); });
        }
        b_tile += (size_t)BK * N;
        cp_async_wait<0>();
        __syncthreads();

        unsigned b[4][2], a[4];
        mma_warp_tile_64x32_k16(
            acc, b, a,
            [&](unsigned (&b)[4][2], int ks) {
#pragma unroll
                for (int ni = 0; ni < 4; ++ni) ldmatrix_x2(b[ni], s_base + 4 * (B_OFF + swizzled_bt_frag_word(b_frag, ni, ks)));
            },
            [&](int mi, int ks) { return s_base + 4 * (A_OFF + swizzled_a_frag_word(a_frag, mi, ks)); });
        __syncthreads();
    }

    store_c_warp_tile_64x32(C, acc, M, N, row0, col0, warp_m, warp_n, lane);
}
