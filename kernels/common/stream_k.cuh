// Stream-K's pieces (walk D 09, 11 on: host_plan.cuh; walk F 09): 05's persistent pipeline over whole tiles [0, dp)
// round-robin, then sk tiles whose k tiles are laid end to end and cut into a range a block; a ring as deep as the tile
// width allows; the fix-up through workspace planes. ROWS 64 (17): whole 64-row tiles, the warpgroups splitting the
// columns (at 64 warpgroup 0 alone: MN-major B needs whole 64-column swizzle rows). ROWS 256 (20): 256 x 192.
#pragma once
#include "operands.cuh"
#include "persistent_ws.cuh"
#include "tma_store.cuh"

namespace stream_k {
using persistent_ws::ARRIVALS, persistent_ws::B_PANEL, persistent_ws::BK, persistent_ws::BM,
    persistent_ws::cdiv, persistent_ws::GROUP, persistent_ws::SMEM_BYTES, persistent_ws::WARPS_PER_TILE;
enum : int {
    MAX_SEGMENTS = 8,  // W planes
    MAX_STAGES = 8,    // the ring's depth at 64 columns
    MAX_CTAS = 256,    // 32-bit range arithmetic (Schedule::begin)
    MAX_KT = 8192,
};

__device__ unsigned int arrivals[ARRIVALS];  // zero when the module loads; each tile's last arrival zeroes its own

// Block b's work: tiles [0, dp) whole, b + i * gridDim.x; then of the sk * KT k tiles of stream-K tiles [dp, dp + sk)
// [begin(b), begin(b + 1)).
struct Schedule {
    int tiles_m, tiles_n, KT, dp, sk;

    // 32-bit: plan_cost keeps sk * KT * gridDim.x < 2^31 (64-bit divisions: subroutines)
    __device__ __forceinline__ int begin(int b) const { return sk * KT * b / (int)gridDim.x; }
    // The block whose range holds stream-K k tile x: the largest b with begin(b) <= x.
    __device__ __forceinline__ int holder(int x) const { return ((x + 1) * (int)gridDim.x - 1) / (sk * KT); }

    // f(tile, k0, k1, segment, segments) for each of this block's units, in the order both roles walk them.
    template <typename F>
    __device__ __forceinline__ void for_each_unit(F&& f) const {
#pragma unroll 1
        for (int t = blockIdx.x; t < dp; t += gridDim.x) f(t, 0, KT, 0, 1);
        const int end = sk ? begin(blockIdx.x + 1) : 0;
#pragma unroll 1
        for (int x = sk ? begin(blockIdx.x) : 0; x < end;) {
            const int j = x / KT, k0 = x % KT, k1 = min(KT, k0 + end - x), first = holder(j * KT);
            f(dp + j, k0, k1, blockIdx.x - first, holder(j * KT + KT - 1) - first + 1);
            x += k1 - k0;
        }
    }
};

template <int WIDTH, int ROWS = BM>
struct Ring {
    enum : int { STAGE = ROWS * BK * 2 + BK * WIDTH * 2, STAGES = SMEM_BYTES / STAGE };  // 8, 6, 4 (64 rows: 12, 8, 4)
};

// The producer's k tiles [k0, k1) of tile (tm, tn) into ring R from `it` on (carried unit to unit; 22 on: the tall
// ring for 128-row tiles too): A in a box of ROWS rows, B in WIDTH / 64 of 64 columns; `back`: last to first.
template <int WIDTH, int ROWS, typename R, typename Ops>
__device__ __forceinline__ void load_unit(const Ops& ops, const TensorMap& tma_a, const TensorMap& tma_b, unsigned char* smem, uint64_t* full,
                                          uint64_t* empty, int& it, int tm, int tn, int k0, int k1, bool back) {
#pragma unroll 1
    for (int kt = k0; kt < k1; ++kt, ++it) {
        const int st = it % R::STAGES;
        if (it >= R::STAGES) mbar_wait(&empty[st], (it / R::STAGES - 1) & 1);
#ifdef PROBE_LOADS_ONCE  // .ci/walkd15_probe.py floor: past the ring's first pass no loads
        if (it >= R::STAGES) {
            mbar_arrive_expect_tx(&full[st], 0);
            continue;
        }
#endif
#ifdef PROBE_L2_RESIDENT  // the floor probe: K's first STAGES k tiles over and over (L2 hits), bytes unchanged
        const int k = kt % R::STAGES;
#else
        const int k = back ? k0 + k1 - 1 - kt : kt;
#endif
        unsigned char* stage = smem + st * R::STAGE;
        mbar_arrive_expect_tx(&full[st], Ring<WIDTH, ROWS>::STAGE);
        if constexpr (ROWS > BM) {  // 20: A in boxes of BM rows, laid out as one of ROWS
#pragma unroll
            for (int r = 0; r < ROWS / BM; ++r) tma_load_2d(stage + r * BM * 128, &tma_a, &full[st], k * Ops::K_TILE, tm * ROWS + r * BM);
        } else {
            tma_load_2d(stage, &tma_a, &full[st], k * Ops::K_TILE, tm * ROWS);
        }
#pragma unroll
        for (int p = 0; p < WIDTH / 64; ++p) ops.load_b(stage + ROWS * 128 + p * B_PANEL, &tma_b, &full[st], k, tn * WIDTH + p * 64);
    }
}

// Producer thread: every unit's k tiles, tiles in groups `group` tile rows high. ORDER (21): odd units walk k last to
// first, so each wave starts on the k tiles the last one ended on, still in L2.
template <int WIDTH, int ROWS = BM, bool ORDER = false, typename Ops>
__device__ __forceinline__ void produce(const Ops& ops, const TensorMap& tma_a, const TensorMap& tma_b, const Schedule& s,
                                        unsigned char* smem, uint64_t* full, uint64_t* empty, int group = GROUP) {
    int it = 0, unit = 0;
    s.for_each_unit([&](int t, int k0, int k1, int, int) {
        int tm, tn;
        grouped_tile(t, s.tiles_m, s.tiles_n, group, tm, tn);
        const bool back = ORDER && (unit++ & 1);
        load_unit<WIDTH, ROWS, Ring<WIDTH, ROWS>>(ops, tma_a, tma_b, smem, full, empty, it, tm, tn, k0, k1, back);
    });
}

// Stream-K fix-up, per consumer warp: this segment's partial to plane `segment` of W (arrives_last); the last
// arrival sums every plane in segment order into acc and returns true: it stores C. CHUNK columns at a time: at 64,
// 16 loads a lane in flight, 32 registers beside 128 accumulators (20's 192: 32 columns).
template <int WIDTH, int CHUNK = 64>
__device__ __forceinline__ bool last_segment_sums(float (&acc)[WIDTH / 2], float* W, unsigned int* arrival, int segments, int segment,
                                                  int M, int N, int row0, int col0) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const size_t plane = (size_t)M * N;
    if (!persistent_ws::arrives_last<WIDTH>(acc, W, arrival, segments, segment, M, N, row0, col0)) return false;
#pragma unroll
    for (int q = 0; q < WIDTH / CHUNK; ++q) {
#pragma unroll
        for (int i = 0; i < CHUNK / 2; ++i) acc[CHUNK / 2 * q + i] = 0.0f;
#pragma unroll 1
        for (int p = 0; p < segments; ++p) {
            const float* part = W + p * plane;
#pragma unroll
            for (int j = CHUNK / 8 * q; j < CHUNK / 8 * (q + 1); ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int r = row0 + warp * 16 + lane / 4 + 8 * h, c = col0 + j * 8 + 2 * (lane % 4);
                    if (r < M && c < N) {
                        const float2 v = __ldcg(reinterpret_cast<const float2*>(part + (size_t)r * N + c));  // other SMs wrote it
                        acc[4 * j + 2 * h] += v.x;
                        acc[4 * j + 2 * h + 1] += v.y;
                    }
                }
        }
    }
    return true;
}

// 19's lean k loop: a unit's k tiles [k0, k1) into warpgroup c's MB blocks of 64 rows x COLS; the stage `st`, its
// parity and the `last` k tile's stage carried unit to unit, not derived from a count.
template <int COLS, int ROWS, int MB, typename R, typename Ops>
__device__ __forceinline__ void lean_k_loop(const Ops& ops, float (&acc)[MB * COLS / 2], const unsigned char* smem, uint64_t* full, uint64_t* empty,
                                            uint32_t& st, uint32_t& phase, uint32_t& last, int k0, int k1, int c) {
    constexpr bool HALF = ROWS < BM;
    // k1 > k0: with a path around the loop ptxas serialised every wgmma
    const int cu = __shfl_sync(0xffffffffu, c, 0);  // uniform registers: the same in the warp, as the compiler now knows
    const uint32_t fulls = smem_u32(full), empties = smem_u32(empty);  // 8 bytes a stage's barrier
    const uint64_t a0 = swizzled_desc(HALF ? smem : smem + cu * MB * 64 * 128, 16, 1024),  // stage 0's operands
        b0 = swizzled_desc(smem + ROWS * 128 + (HALF ? cu * (COLS / 64) * B_PANEL : 0), operands::B_BOX, 1024);
    int kt = k0;
#pragma unroll 1
    do {
        mbar_wait_addr(fulls + 8 * st, phase);
        const uint32_t offset = st * (R::STAGE >> 4);  // a stage's descriptors: stage 0's plus its bytes >> 4
        ops.template rows_k_tile_desc<COLS, MB>(acc, a0 + offset, b0 + offset);
        wgmma_wait<1>();
        if (kt > k0) mbar_arrive_addr(empties + 8 * last);
        last = st;
        if (++st == R::STAGES) {
            st = 0;
            phase ^= 1;
        }
    } while (++kt < k1);
    wgmma_wait<0>();
    fence_acc(acc);
    mbar_arrive_addr(empties + 8 * last);
}

// Consumer warpgroup c (0 or 1): 05's k loop (one wgmma group in flight) over every unit, then C or the fix-up.
// TMA_STORE (12): whole tiles out through `staging` and TMA stores (EVICT, 24: first out of L2); the fix-up's
// from registers (each warp may finish in another block). LEAN (19): lean_k_loop. `group`: produce's.
template <int WIDTH, bool TMA_STORE = false, int ROWS = BM, bool LEAN = false, bool EVICT = false, typename Ops>
__device__ __forceinline__ void consume(const Ops& ops, const Schedule& s, const unsigned char* smem, uint64_t* full, uint64_t* empty,
                                        float* __restrict__ C, float* W, int M, int N, int c, const TensorMap* tma_c = nullptr,
                                        unsigned char* staging = nullptr, int group = GROUP) {
    using R = Ring<WIDTH, ROWS>;
    constexpr bool HALF = ROWS < BM;
    constexpr int COLS = !HALF ? WIDTH : WIDTH == 64 ? 64 : WIDTH / 2, MB = HALF ? 1 : ROWS / BM;  // MB: 64-row blocks
    static_assert(!HALF || TMA_STORE, "64-row tiles need TMA stores");
    static_assert(MB == 1 || LEAN, "tall tiles run the lean k loop");
    int it = 0, chunk = 0;
    uint32_t st = 0, phase = 0, last = 0;  // LEAN's
    s.for_each_unit([&](int t, int k0, int k1, int segment, int segments) {
        int tm, tn;
        grouped_tile(t, s.tiles_m, s.tiles_n, group, tm, tn);
        float acc[MB * COLS / 2] = {};
        if constexpr (LEAN) {
            lean_k_loop<COLS, ROWS, MB, R>(ops, acc, smem, full, empty, st, phase, last, k0, k1, c);
        } else {
#pragma unroll 1
            for (int kt = k0; kt < k1; ++kt, ++it) {
                const int st = it % R::STAGES;
                mbar_wait(&full[st], (it / R::STAGES) & 1);
                const unsigned char* stage = smem + st * R::STAGE;
                const unsigned char* b = stage + ROWS * 128 + (HALF ? c * (COLS / 64) * B_PANEL : 0);
                ops.template rows_k_tile<COLS>(acc, HALF ? stage : stage + c * 64 * 128, b);
                wgmma_wait<1>();
                if (kt > k0) mbar_arrive(&empty[(it - 1) % R::STAGES]);
            }
            wgmma_wait<0>();
            fence_acc(acc);
            mbar_arrive(&empty[(it - 1) % R::STAGES]);
        }
        // Not before the k loop: live across it, it changed 09-16's code
        const auto row0 = [&] { return tm * ROWS + (HALF ? 0 : c * 64 * MB); };
        const auto col0 = [&] { return tn * WIDTH + (HALF ? c * COLS : 0); };
#pragma unroll
        for (int m = 0; m < MB; ++m) {  // each block of 64 rows: its own fix-up counters and stores
            float(&part)[COLS / 2] = *reinterpret_cast<float(*)[COLS / 2]>(acc + m * COLS / 2);
            if constexpr (!HALF) {
                if (segments > 1 &&
                    !last_segment_sums<WIDTH, MB == 1 ? 64 : 32>(part, W, &arrivals[(t - s.dp) * (ROWS / 16) + (c * MB + m) * 4 + threadIdx.x % 128 / 32],
                                                                 segments, segment, M, N, row0() + 64 * m, col0()))
                    continue;
            }
            ops.scale(part);
#ifdef PROBE_NO_STORE  // floor probe: no C stores; the result used, or ptxas drops the wgmmas
            if (__float_as_uint(part[0]) != 0x7fc00123u) continue;
#endif
            if constexpr (TMA_STORE) {
                if (HALF || segments == 1) {  // the same for the whole block
                    tma_store::store<COLS, (MB > 1), EVICT>(part, *tma_c, staging, chunk, row0() + 64 * m, col0(), c);
                    continue;
                }
            }
            store_acc<COLS>(part, C, M, N, row0() + 64 * m, col0());
        }
    });
    if constexpr (TMA_STORE) {
        if (threadIdx.x % 128 == 0) tma_store::drain();
    }
}
}  // namespace stream_k
