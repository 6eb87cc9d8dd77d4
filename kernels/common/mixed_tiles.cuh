// Walk D's 22: 20's 256 x 192 tiles over C's first columns and 19's 128 x 256 tiles over the rest, one persistent
// launch, whole tiles only. The two tiles' columns meet at multiples of SPAN (768 = 4 x 192 = 3 x 256), so each
// tile's column is its index times its width (stream_k.cuh's load_unit). One ring for both, the tall ring's stages
// (3 x 56 KB; a 128 x 256 k tile fills 48 KB of its stage); the stage, parity and tile order carried across both.
#pragma once
#include "stream_k.cuh"

namespace mixed_tiles {
using namespace stream_k;
using persistent_ws::cdiv;
enum : int { TALL_ROWS = 256, TALL_WIDTH = 192, WIDE_ROWS = 128, WIDE_WIDTH = 256, SPAN = 768 };
using TallRing = Ring<TALL_WIDTH, TALL_ROWS>;

// The tiles: tall ones over `spans` spans of columns, then wide ones over the rest. Every block takes units blockIdx.x,
// + gridDim.x, ... of the tall tiles then the wide ones, each part in groups `group` tile rows high.
struct Mix {
    int tall_m, tall_n, wide_m, wide_n, skip;  // skip: the wide tile columns that the tall tiles cover

    __device__ __forceinline__ Mix(int M, int N, int spans)
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

// Consumer warpgroup c's unit: a ROWS x WIDTH tile's k loop (19's), then its MB blocks of 64 rows out through TMA.
template <int ROWS, int WIDTH, typename Ops>
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
        tma_store::store<WIDTH, true>(part, tma_c, staging, chunk, tm * ROWS + (c * MB + m) * 64, tn * WIDTH, c);
    }
}

// The kernel body: 20's roles and registers (a producer thread at 24, two consumer warpgroups at 240), a dependent
// launch (15), k walked in turns (21); tma_a in boxes of 128 rows.
template <typename Ops>
__device__ __forceinline__ void run(const Ops& ops, const TensorMap& tma_a, const TensorMap& tma_b, const TensorMap& tma_c, int M, int N,
                                    int K, int spans, int group) {
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
    const Mix mix(M, N, spans);
    if (wg == 0) {
        setmaxnreg_dec<24>();
        if (tid == 0) {
            int it = 0;
            bool back = false;
            mix.for_each_unit(
                group,
                [&](int tm, int tn) {
                    load_unit<TALL_WIDTH, TALL_ROWS, TallRing>(ops, tma_a, tma_b, smem, full, empty, it, tm, tn, 0, KT, back);
                    back = !back;
                },
                [&](int tm, int tn) {
                    load_unit<WIDE_WIDTH, WIDE_ROWS, TallRing>(ops, tma_a, tma_b, smem, full, empty, it, tm, tn, 0, KT, back);
                    back = !back;
                });
        }
    } else {
        setmaxnreg_inc<240>();
        const int c = wg - 1;
        unsigned char* staging = smem + persistent_ws::SMEM_BYTES + c * 2 * tma_store::BUFFER;
        int chunk = 0;
        uint32_t st = 0, phase = 0, last = 0;
        mix.for_each_unit(
            group,
            [&](int tm, int tn) {
                consume_unit<TALL_ROWS, TALL_WIDTH>(ops, smem, full, empty, st, phase, last, chunk, tma_c, staging, KT, c, tm, tn);
            },
            [&](int tm, int tn) {
                consume_unit<WIDE_ROWS, WIDE_WIDTH>(ops, smem, full, empty, st, phase, last, chunk, tma_c, staging, KT, c, tm, tn);
            });
        if (threadIdx.x % 128 == 0) tma_store::drain();
    }
}
}  // namespace mixed_tiles
