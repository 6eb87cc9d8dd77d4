// 02 tf32_bt_swizzle_dbf: tf32_bt_swizzle with two shared-memory stages and a
// block-order (grid) swizzle.
// Double buffer: while the warps run the mma of tile kt from one stage, tile
// kt+1 is already on its way: A by cp.async straight into the other stage, B by
// LDG.128 into registers, stored (rounded, transposed) into the other stage only
// after the mma, so the global-load latency hides behind the tensor cores instead
// of sitting between barrier and compute. One barrier per tile: at the top of
// iteration kt every thread has finished reading the other stage (tile kt-1), so
// it may be refilled, and tile kt (waited for and stored) is visible. 32 KB.
// Grid swizzle: blocks run in launch order down 8-tile-wide column strips
// (column_strips.cuh), so the blocks resident together share B column panels
// and A row panels in L2 rather than sweeping a full row of tiles.
// Tiles, swizzle, fragments and TF32 rounding (cvt.rna) as in tf32_bt_swizzle.
#include "column_strips.cuh"
#include "tf32_tiles.cuh"

constexpr int BM = 128, BN = 128, BK = 16, THREADS = 256;
constexpr int A_OFF = 0, B_OFF = BM * BK;  // per stage: As[m][k] 128 x 16, then Bs[n][k] 128 x 16
constexpr int STAGE_FLOATS = (BM + BN) * BK;

extern "C" __global__ void __launch_bounds__(THREADS, 2)
tf32_bt_swizzle_dbf(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(128) float smem[2 * STAGE_FLOATS];
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    int tile_row, tile_col;
    column_strips<8>(tile_row, tile_col);
    const int row0 = tile_row * BM, col0 = tile_col * BN;

    // Copy roles as in tf32_bt: A chunks (row a_r + 64 i, k 4 a_c), B float4s (k b_k + 8 i, n 4 b_n).
    const int a_r = t / 4, a_c = t % 4;
    const int b_n = lane % 8 + 8 * (warp % 4), b_k = lane / 8 + 4 * (warp / 4);
    // Each call fetches the next tile: its origin (a_tile, b_tile) is block-uniform and moves one tile per
    // call; a thread adds its 32-bit offset (< 128 K, < 16 N), which keeps 64-bit math off the per-thread path.
    const float* a_tile = A + (size_t)row0 * K;
    const float* b_tile = B + col0;
    const int a_off = a_r * K + 4 * a_c, b_off = b_k * N + 4 * b_n;
    const bool a_row_ok[2] = {row0 + a_r < M, row0 + a_r + 64 < M};
    const bool b_col_ok = col0 + 4 * b_n < N;
    auto load_a = [&](int k0, int stage) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const bool ok = a_row_ok[i] && k0 + 4 * a_c < K;
            cp_async_16(&smem[stage * STAGE_FLOATS + A_OFF + swizzled_128x16_word(a_r + 64 * i, 4 * a_c)],
                        ok ? a_tile + (a_off + 64 * i * K) : A, ok);
        }
        a_tile += BK;
    };
    float4 bv[2];
    auto load_b = [&](int k0) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const bool ok = b_col_ok && k0 + b_k + 8 * i < K;
            bv[i] = ok ? __ldg(reinterpret_cast<const float4*>(b_tile + (b_off + 8 * i * N))) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
        b_tile += (size_t)BK * N;
    };
    // Transposing stores from one live address, as in tf32_bt_swizzle (swizzled_bt_store_word).
    const int b_store = swizzled_128x16_word(4 * b_n, b_k);
    auto store_b = [&](int stage) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const float e[4] = {bv[i].x, bv[i].y, bv[i].z, bv[i].w};
            store_tf32_transposed(smem, e,
                                  [&](int j) { return stage * STAGE_FLOATS + B_OFF + swizzled_bt_store_word(b_store, i, j); });
        }
    };

    const int warp_m = warp / 4, warp_n = warp % 4;
    const unsigned s_base = smem_u32(smem);
    // ldmatrix row addresses as in tf32_bt_swizzle: the lane's tile word at (mi, ni, ks) = 0, then
    // swizzled_a_frag_word / swizzled_bt_frag_word turn mi, ni and ks into XORs plus a row offset.
    const int a_frag = swizzled_128x16_word(warp_m * 64 + lane % 16, 4 * (lane / 16));
    const int b_frag = swizzled_128x16_word(warp_n * 32 + lane % 8, 4 * ((lane / 8) % 2));
    float acc[4][4][4] = {};
    auto compute = [&](int stage) {
        const unsigned base = s_base + 4 * stage * STAGE_FLOATS;
        unsigned b[4][2], a[4];
        mma_warp_tile_64x32_k16(
            acc, b, a,
            [&](unsigned (&b)[4][2], int ks) {
#pragma unroll
                for (int ni = 0; ni < 4; ++ni) ldmatrix_x2(b[ni], base + 4 * (B_OFF + swizzled_bt_frag_word(b_frag, ni, ks)));
            },
            [&](int mi, int ks) { return base + 4 * (A_OFF + swizzled_a_frag_word(a_frag, mi, ks)); });
    };

    const int KT = (K + BK - 1) / BK;
    if (KT > 0) {
        load_a(0, 0);
        cp_async_commit();
        load_b(0);
        store_b(0);
    }
    for (int kt = 0; kt < KT; ++kt) {
        const int stage = kt & 1;
        cp_async_wait<0>();  // the only group in flight is tile kt's
        __syncthreads();     // tile kt visible to all; every thread is past its reads of tile kt-1
        const bool more = kt + 1 < KT;
        if (more) {
            load_a((kt + 1) * BK, stage ^ 1);
            cp_async_commit();
            load_b((kt + 1) * BK);
        }
        compute(stage);
        if (more) store_b(stage ^ 1);
    }

    store_c_warp_tile_64x32(C, acc, M, N, row0, col0, warp_m, warp_n, lane);
}
