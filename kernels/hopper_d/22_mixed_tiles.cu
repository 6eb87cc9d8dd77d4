// 22 mixed_tiles: 21, or 20's 256 x 192 tiles over C's first columns beside 19's 128 x 256 tiles over the rest, all
// whole, in one launch, where the host's plan finds that mix cheaper.
// At the capped cubes a launch's time is its energy over the 700 W cap, and 20's tall tiles take in 22 % fewer bytes a
// MAC than 128 x 256 ones: in whole waves 103.2 / 103.4 % of cuBLAS against 19's 99.6 / 100.3 (h200-tall1). 20 takes
// them only where their waves fill the blocks: at 4096^3 they are 16 x 22 = 352 (2.67 waves, the last column two
// thirds empty), and stream-K there would cut ranges of 21 k tiles, too short for their fix-up (MIN_SPLIT_KT); so
// 19-21 run 512 tiles of 128 x 256, 3.88 waves.
// What changed: where the plan (host_plan.py, mixed_launch_plan) says SPANS > 0, the first SPANS x 768 columns go in
// tall tiles and the rest in 128 x 256 ones, both whole, walked round-robin, the tall ones first. At 4096^3: 256 tall
// tiles over 3072 columns, 128 wide ones over 1024, each block two of one and one of the other (19's 4 waves' time),
// 75 % of the MACs in tall tiles, no fix-up. Elsewhere (SPANS 0) 21's code.
// Predicted: at 4096^3 about 2 points of cuBLAS more than 21 (three quarters of 20's 3 in whole waves).
// Measured (H200s, 5bab112, README.md): 4096^3 by do_bench, 21 -> 22, BF16 99.5 -> 101.8 and 99.4 -> 101.4 %, FP16
// 100.2 -> 101.6 and 99.7 -> 101.7 (three cards); in blocks (h200-cubesf) 99.7 / 99.3 -> 101.8 / 101.6; DRAM 131 -> 124
// MB (ncu). The 15 LLM shapes its plan mixes (h200-llmd): 97.8-102.1 -> 99.7-107.6. Kept: 1.0x at 4096^3 reached.
// N % 8 == 0, K % 8 == 0, any M.
#include "host_plan.cuh"

// The two tiles' columns meet at multiples of SPAN (768 = 4 x 192 = 3 x 256), so each tile's column is its index times
// its width (stream_k.cuh's load_unit). One ring for both, the tall ring's (3 x 56 KB; a 128 x 256 k tile fills 48 KB of
// its stage), its stage and parity carried from tile to tile whatever their kind.
namespace mixed_tiles {
using namespace stream_k;
using persistent_ws::cdiv;
enum : int { TALL_ROWS = 256, TALL_WIDTH = 192, WIDE_ROWS = 128, WIDE_WIDTH = 256, SPAN = 768 };
using TallRing = Ring<TALL_WIDTH, TALL_ROWS>;

// Tall tiles over `spans` spans of columns, wide ones over the rest; block b takes units b, b + gridDim.x, ... of the
// tall tiles, then the wide ones, each kind in groups `group` tile rows high.
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

using persistent_ws::STAGE_BYTES, persistent_ws::STAGES, tma_store::BYTES;
// 19's grid, boxes and dynamic shared memory (the tall ring of 3 x 56 KB and its staging fit in it).
enum : int { BM = 64, BN = 8, SMEM_BYTES = STAGES * STAGE_BYTES + BYTES };

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_mixed_tiles(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_a128, const __grid_constant__ TensorMap tma_b,
              const __grid_constant__ TensorMap tma_c, float* __restrict__ C, float* __restrict__ W, int M, int N, int K, int ROWS,
              int WIDTH, int DP, int SK, int GROUP, int SPANS) {
    if (SPANS) mixed_tiles::run(operands::Bit16<T>{}, tma_a128, tma_b, tma_c, M, N, K, SPANS, GROUP);
    else host_plan::run_rows<true, true, true>(operands::Bit16<T>{}, tma_a, tma_a128, tma_b, tma_c, C, W, M, N, K, ROWS, WIDTH, DP, SK, GROUP);
}
