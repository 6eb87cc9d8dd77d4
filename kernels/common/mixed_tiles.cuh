// Walk D's whole tiles of two kinds in one launch and one ring (22 on): 20's 256 x 192 tiles beside a second kind of
// 128 rows, 22's 128 x 256 tiles over C's last columns or 23's 128 x 192 halves of the last tall tiles.
#pragma once
#include "host_plan.cuh"

// 22's: the two tiles' columns meet at multiples of SPAN (768 = 4 x 192 = 3 x 256), so each tile's column is its index
// times its width (stream_k.cuh's load_unit). 23's halves: a tall tile's 192 columns, its rows 128 at a time. One ring
// for both kinds, the tall ring's (3 x 56 KB; a 128-row k tile fills 40 or 48 KB of its stage), its stage and parity
// carried from tile to tile whatever their kind.
namespace mixed_tiles {
using namespace stream_k;
using persistent_ws::cdiv;
enum : int { TALL_ROWS = 256, TALL_WIDTH = 192, WIDE_ROWS = 128, WIDE_WIDTH = 256, SPAN = 768, HALF_ROWS = 128 };
using TallRing = Ring<TALL_WIDTH, TALL_ROWS>;

// Tall tiles over `spans` spans of columns, wide ones over the rest; block b takes units b, b + gridDim.x, ... of the
// tall tiles, then the wide ones, each kind in groups `group` tile rows high.
struct Mix {
    int tall_m, tall_n, wide_m, wide_n, skip;  // skip: the wide tile columns that the tall tiles cover

    __device__ __forceinline__ Mix(int M, int N, int spans)  // 22's SPANS
        : tall_m(cdiv(M, TALL_ROWS)), tall_n(spans * (SPAN / TALL_WIDTH)), wide_m(cdiv(M, WIDE_ROWS)),
          wide_n(cdiv(N - spans * SPAN, WIDE_WIDTH)), skip(spans * (SPAN / WIDE_WIDTH)) {}

    // tall(tm, tn) or wide(tm, tn) for each of this block's units, in the order both roles walk them.
    template <typename Tall, typename Wide>
    __device__ __forceinline__ void for_each_unit(int group, Tall&& tall, Wide&& wide) const {
        const int talls = tall_m * tall_n, all = talls + wide_m * wide_n;
#pragma unroll 1
        for (int t = blockIdx.x; t < all; t += gridDim.x) {
            int tm, tn;
            if (t < talls) {
                grouped_tile(t, tall_m, tall_n, group, tm, tn);
                tall(tm, tn);
            } else {
                grouped_tile(t - talls, wide_m, wide_n, group, tm, tn);
                wide(tm, tn + skip);
            }
        }
    }
};

// 23: tall tiles [0, dp) whole, round-robin, then each of the rest as two units of 128 rows x 192 (`half`, its row in
// 128-row tiles; past M left out), so the last part-filled round runs whole units of half a tile instead of 20's
// stream-K halves and their fix-up.
struct TallHalves {
    int tiles_m, tiles_n, dp, rows;  // rows: M's 128-row tiles

    __device__ __forceinline__ TallHalves(int M, int N, int dp)  // 23's DP
        : tiles_m(cdiv(M, TALL_ROWS)), tiles_n(cdiv(N, TALL_WIDTH)), dp(dp), rows(cdiv(M, HALF_ROWS)) {}

    template <typename Tall, typename Half>
    __device__ __forceinline__ void for_each_unit(int group, Tall&& tall, Half&& half) const {
        const int all = dp + 2 * (tiles_m * tiles_n - dp);
#pragma unroll 1
        for (int u = blockIdx.x; u < all; u += gridDim.x) {
            int tm, tn;
            grouped_tile(u < dp ? u : dp + (u - dp) / 2, tiles_m, tiles_n, group, tm, tn);
            if (u < dp) tall(tm, tn);
            else if (2 * tm + (u - dp) % 2 < rows) half(2 * tm + (u - dp) % 2, tn);
        }
    }
};

// Consumer warpgroup c's unit: a ROWS x WIDTH tile's k loop (19's), then its MB blocks of 64 rows out through TMA
// (EVICT, 24: first out of L2).
template <int ROWS, int WIDTH, bool EVICT, typename Ops>
__device__ __forceinline__ void consume_unit(const Ops& ops, const unsigned char* smem, uint64_t* full, uint64_t* empty, uint32_t& st,
                                             uint32_t& phase, uint32_t& last, int& chunk, const TensorMap& tma_c, unsigned char* staging,
                                             int KT, int c, int tm, int tn) {
    constexpr int MB = ROWS / BM;  // a warpgroup's blocks of 64 rows
    float acc[MB * WIDTH / 2] = {};
    lean_k_loop<WIDTH, ROWS, MB, TallRing>(ops, acc, smem, full, empty, st, phase, last, 0, KT, c);
#pragma unroll
    for (int m = 0; m < MB; ++m) {
        float(&part)[WIDTH / 2] = *reinterpret_cast<float(*)[WIDTH / 2]>(acc + m * WIDTH / 2);
        ops.scale(part);
        tma_store::store<WIDTH, true, EVICT>(part, tma_c, staging, chunk, tm * ROWS + (c * MB + m) * 64, tn * WIDTH, c);
    }
}

// The kernel body: 20's roles and registers (a producer thread at 24, two consumer warpgroups at 240), a dependent
// launch (15), k walked in turns (21); tma_a in boxes of 128 rows. Units (Mix, TallHalves) built from M, N and `arg`
// walk the tall tiles and the second kind, ROWS2 x WIDTH2.
template <typename Units, int ROWS2, int WIDTH2, bool EVICT = false, typename Ops>
__device__ __forceinline__ void run(const Ops& ops, const TensorMap& tma_a, const TensorMap& tma_b, const TensorMap& tma_c, int M, int N,
                                    int K, int arg, int group) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[TallRing::STAGES], empty[TallRing::STAGES];
    const int tid = threadIdx.x, wg = tid / 128, KT = cdiv(K, Ops::K_TILE);
    if (tid == 0) {
        prefetch_tensormap(tma_a);
        prefetch_tensormap(tma_b);
        prefetch_tensormap(tma_c);
        ring_init<TallRing::STAGES>(full, empty, 256);
    }
    __syncthreads();
    after_setup<true>();
    const Units units(M, N, arg);
    if (wg == 0) {
        setmaxnreg_dec<24>();
        if (tid == 0) {
            int it = 0;
            bool back = false;
            units.for_each_unit(
                group,
                [&](int tm, int tn) {
                    load_unit<TALL_WIDTH, TALL_ROWS, TallRing>(ops, tma_a, tma_b, smem, full, empty, it, tm, tn, 0, KT, back);
                    back = !back;
                },
                [&](int tm, int tn) {
                    load_unit<WIDTH2, ROWS2, TallRing>(ops, tma_a, tma_b, smem, full, empty, it, tm, tn, 0, KT, back);
                    back = !back;
                });
        }
    } else {
        setmaxnreg_inc<240>();
        const int c = wg - 1;
        unsigned char* staging = smem + persistent_ws::SMEM_BYTES + c * 2 * tma_store::BUFFER;
        int chunk = 0;
        uint32_t st = 0, phase = 0, last = 0;
        units.for_each_unit(
            group,
            [&](int tm, int tn) {
                consume_unit<TALL_ROWS, TALL_WIDTH, EVICT>(ops, smem, full, empty, st, phase, last, chunk, tma_c, staging, KT, c, tm, tn);
            },
            [&](int tm, int tn) {
                consume_unit<ROWS2, WIDTH2, EVICT>(ops, smem, full, empty, st, phase, last, chunk, tma_c, staging, KT, c, tm, tn);
            });
        if (threadIdx.x % 128 == 0) tma_store::drain();
    }
}

// 23's body (24: EVICT): 22's mix (spans), or tall tiles with the last part-filled round's in halves
// (halves), or 21's plan.
template <bool EVICT, typename Ops>
__device__ __forceinline__ void run_tail_halves(const Ops& ops, const TensorMap& tma_a, const TensorMap& tma_a128, const TensorMap& tma_b,
                                                const TensorMap& tma_c, float* __restrict__ C, float* W, int M, int N, int K, int rows,
                                                int width, int dp, int sk, int group, int spans, int halves) {
    if (spans) run<Mix, WIDE_ROWS, WIDE_WIDTH, EVICT>(ops, tma_a128, tma_b, tma_c, M, N, K, spans, group);
    else if (halves) run<TallHalves, HALF_ROWS, TALL_WIDTH, EVICT>(ops, tma_a128, tma_b, tma_c, M, N, K, dp, group);
    else host_plan::run_rows<true, true, true, EVICT>(ops, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, rows, width, dp, sk, group);
}
}  // namespace mixed_tiles
