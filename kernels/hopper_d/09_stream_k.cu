// 09 stream_k: 07's per-shape tiles, with the last wave's k tiles shared evenly by every block (stream-K, Osama et
// al., PPoPP'23), a ring as deep as the tile width allows, and the tensor maps prefetched at entry.
// Wave quantisation: 07 runs whole tiles, so a block's time is ceil(tiles / blocks) tiles. At 8192^3 that is 16
// waves of 128x256 tiles for 15.5 waves of work (2048 tiles, 132 SMs): the last wave leaves 64 SMs idle, 3 % of
// the time. Here the tiles are split into a data-parallel part, whole waves walked round-robin in 05's grouped
// order, and a stream-K part, the last tiles % blocks tiles (all of them where tiles < blocks), whose k tiles are
// laid end to end and cut into one contiguous range per block, the ranges differing by at most one k tile. A range
// crossing a tile's edge leaves that tile in segments: each segment's partial sum goes to plane `segment` of the
// workspace W (8 planes of M x N floats) and counts its arrival per (tile, consumer warp); the warp that arrives
// last sums the planes in segment order (the same bits whichever block was last) and stores C, as 08 does, so no
// block ever waits for another. Unlike 08's fix-up (a plane's row loads all in flight, WIDTH <= 128), this one
// sums 64 columns at a time, so 256-column tiles split without spilling.
// The plan (warp 0, a candidate a lane): width 256, 128 or 64, whole waves or stream-K, fewest estimated k-tile
// times a block, the fix-up costed as the partial tiles it moves (a stream-K range writes at most two, the last
// arrival reads every segment back), at twice a k tile's load rate; stream-K only where a tile has at most 8
// segments. Predicted: 8192^3 about 2.5 % faster than 05/07 (15 waves + 66 k tiles + fix-up against 16 waves of
// 128); 4096^3 a tie in the model (it stays whole waves); 1024^3 and 2048^3 unchanged by stream-K (128 tiles for
// 132 blocks is already 97 % balanced: a block's range could not shrink below 07's 16 or 05's 32 k tiles).
// The ring: 05's 4 stages of 48 KB are sized for 256-column tiles; a 128x64 tile's stage needs 24 KB, so the same
// 192 KB holds 8 stages (128 columns: 6), twice the loads in flight for 1024^3's narrow tiles (07 there: tensor
// pipe 29 % of active cycles, memory throughput 34 %). Prefetching both tensor maps lets the first TMA load find
// its descriptor on chip.
// Outcome (H100, kernels/hopper_d/README.md): 8192^3 102.5 % of cuBLAS against 05's 98-101 % in the same call;
// 1024^3 81 % against 07's 84-86 %: evaluating the stream-K candidates delays every block's first load (a variant
// planning whole waves only ran at 07's 86 %); 2048^3 90 % against 05's 93 %.
// N % 8 == 0, K % 8 == 0, any M.
#include "persistent_ws.cuh"

// The persistent grid: one block per SM wherever a 128x8 strip count allows (stream-K wants every SM, however few
// tiles; kernels/sources.py reads BM and BN here before the header's 128x256 ring's).
enum : int { BM = 128, BN = 8 };

namespace stream_k {
using persistent_ws::A_BYTES, persistent_ws::ARRIVALS, persistent_ws::B_PANEL, persistent_ws::BK, persistent_ws::BM,
    persistent_ws::cdiv, persistent_ws::GROUP, persistent_ws::SMEM_BYTES, persistent_ws::WARPS_PER_TILE;
enum : int {
    MAX_SEGMENTS = 8,  // workspace planes
    MAX_STAGES = 8,    // the ring's depth for 64-column tiles
    MAX_CTAS = 256,    // stream-K's limits: 32-bit range arithmetic (Schedule::begin)
    MAX_KT = 8192,
};

__device__ unsigned int arrivals[ARRIVALS];  // zero when the module loads; each tile's last arrival zeroes its own

__device__ __forceinline__ void prefetch_tensormap(const TensorMap& map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map) : "memory");
}

// Every block's work: tiles [0, dp) whole, blockIdx.x + i * gridDim.x; then the stream-K tiles [dp, dp + sk), whose
// sk * KT k tiles block b takes [begin(b), begin(b + 1)) of.
struct Schedule {
    int tiles_m, tiles_n, KT, dp, sk;

    // 32-bit: plan_cost keeps sk * KT * gridDim.x under 2^31 (64-bit divisions are subroutines, on the path to the
    // first load).
    __device__ __forceinline__ int begin(int b) const { return sk * KT * b / (int)gridDim.x; }
    // The block whose range holds stream-K k tile x: the largest b with begin(b) <= x.
    __device__ __forceinline__ int holder(int x) const { return ((x + 1) * (int)gridDim.x - 1) / (sk * KT); }

    // f(tile, k0, k1, segment, segments) for each of this block's work units, in the order both roles walk them.
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

template <int WIDTH>
struct Ring {
    enum : int { STAGE = A_BYTES + BK * WIDTH * 2, STAGES = SMEM_BYTES / STAGE };  // 8, 6, 4 stages
};

// Producer thread: every unit's k tiles, A as one 128 x 64 box and B as WIDTH / 64 boxes of 64 x 64.
template <int WIDTH>
__device__ __forceinline__ void produce(const TensorMap& tma_a, const TensorMap& tma_b, const Schedule& s, unsigned char* smem,
                                        uint64_t* full, uint64_t* empty) {
    constexpr int STAGES_W = Ring<WIDTH>::STAGES;
    int it = 0;
    s.for_each_unit([&](int t, int k0, int k1, int, int) {
        int tm, tn;
        grouped_tile<GROUP>(t, s.tiles_m, s.tiles_n, tm, tn);
#pragma unroll 1
        for (int kt = k0; kt < k1; ++kt, ++it) {
            const int st = it % STAGES_W;
            if (it >= STAGES_W) mbar_wait(&empty[st], (it / STAGES_W - 1) & 1);
            unsigned char* stage = smem + st * Ring<WIDTH>::STAGE;
            mbar_arrive_expect_tx(&full[st], Ring<WIDTH>::STAGE);
            tma_load_2d(stage, &tma_a, &full[st], kt * BK, tm * BM);
#pragma unroll
            for (int p = 0; p < WIDTH / 64; ++p)
                tma_load_2d(stage + A_BYTES + p * B_PANEL, &tma_b, &full[st], tn * WIDTH + p * 64, kt * BK);
        }
    });
}

// Stream-K fix-up, per consumer warp: this segment's partial to plane `segment` of W (persistent_ws::arrives_last);
// the last of the tile's `segments` arrivals sums every plane in segment order into acc and returns true: it stores
// C. 64 columns at a time: a lane's 16 loads of a plane's chunk in flight together, 32 registers beside 256 columns'
// 128 accumulators.
template <int WIDTH>
__device__ __forceinline__ bool last_segment_sums(float (&acc)[WIDTH / 2], float* W, unsigned int* arrival, int segments, int segment,
                                                  int M, int N, int row0, int col0) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const size_t plane = (size_t)M * N;
    if (!persistent_ws::arrives_last<WIDTH>(acc, W, arrival, segments, segment, M, N, row0, col0)) return false;
#pragma unroll
    for (int q = 0; q < WIDTH / 64; ++q) {
#pragma unroll
        for (int i = 0; i < 32; ++i) acc[32 * q + i] = 0.0f;
#pragma unroll 1
        for (int p = 0; p < segments; ++p) {
            const float* part = W + p * plane;
#pragma unroll
            for (int j = 8 * q; j < 8 * q + 8; ++j)
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

// Consumer warpgroup c (0 or 1): 05's k loop (one wgmma group in flight) over every unit, then C or the fix-up.
template <typename T, int WIDTH>
__device__ __forceinline__ void consume(const Schedule& s, const unsigned char* smem, uint64_t* full, uint64_t* empty,
                                        float* __restrict__ C, float* W, int M, int N, int c) {
    constexpr int STAGES_W = Ring<WIDTH>::STAGES;
    int it = 0;
    s.for_each_unit([&](int t, int k0, int k1, int segment, int segments) {
        int tm, tn;
        grouped_tile<GROUP>(t, s.tiles_m, s.tiles_n, tm, tn);
        float acc[WIDTH / 2] = {};
#pragma unroll 1
        for (int kt = k0; kt < k1; ++kt, ++it) {
            const int st = it % STAGES_W;
            mbar_wait(&full[st], (it / STAGES_W) & 1);
            const unsigned char* stage = smem + st * Ring<WIDTH>::STAGE;
            wgmma_k_tile<WIDTH, BK, T>(acc, stage + c * 64 * 128, stage + A_BYTES, B_PANEL);
            wgmma_wait<1>();
            if (kt > k0) mbar_arrive(&empty[(it - 1) % STAGES_W]);
        }
        wgmma_wait<0>();
        fence_acc(acc);
        mbar_arrive(&empty[(it - 1) % STAGES_W]);
        if (segments > 1 &&
            !last_segment_sums<WIDTH>(acc, W, &arrivals[(t - s.dp) * WARPS_PER_TILE + c * 4 + threadIdx.x % 128 / 32], segments,
                                      segment, M, N, tm * BM + c * 64, tn * WIDTH))
            return;
        store_acc<WIDTH>(acc, C, M, N, tm * BM + c * 64, tn * WIDTH);
    });
}

// The estimated k-tile times of a block for tiles `bn` wide, whole waves only (sk false) or with the last ones'
// k tiles shared (sk true), or -1 where that plan may not run. Whole waves: 07's model, waves x KT x (bn + 32).
__device__ __forceinline__ long long plan_cost(int M, int N, int K, int ctas, int bn, bool sk, Schedule& s) {
    s = Schedule{cdiv(M, BM), (N + bn - 1) >> (31 - __clz(bn)), cdiv(K, BK), 0, 0};  // bn: a power of 2
    const int tiles = s.tiles_m * s.tiles_n;
    if (!sk) {
        s.dp = tiles;
        return (long long)cdiv(tiles, ctas) * s.KT * (bn + 32);
    }
    // Whole waves fill every block; or 32-bit range arithmetic might overflow (sk < ctas <= 256, KT <= 8192).
    if (tiles % ctas == 0 || ctas > MAX_CTAS || s.KT > MAX_KT) return -1;
    s.sk = tiles < ctas ? tiles : tiles % ctas;
    s.dp = tiles - s.sk;
    const int total = s.sk * s.KT, least = total / ctas;  // the shortest range; the longest is one more
    // At most (KT - 1) / least + 2 segments a tile: its interior holds range starts at least `least` apart.
    if (least < 1 || (s.KT - 1) / least + 2 > MAX_SEGMENTS || s.sk > ARRIVALS / WARPS_PER_TILE) return -1;
    const int segments = (s.KT - 1) / least + 2, rows = min(M, BM);
    // Fix-up: two partial tiles written and `segments` read back, floats at twice a k tile's (BM + bn) x BK 16-bit
    // load rate; plus one for the fences and the count.
    const int fixup = 1 + cdiv((2 + segments) * rows * bn * 4, 2 * (BM + bn) * BK * 2);
    return ((long long)(s.dp / ctas) * s.KT + cdiv(total, ctas) + fixup) * (bn + 32);
}

// The cheapest plan, by warp 0: lane l costs width 256 >> (l / 2), stream-K if l is odd (lanes 0-5); the lowest
// cost wins, ties to the lower lane (the wider tile, then whole waves). Every lane returns the winner's schedule.
__device__ __forceinline__ Schedule plan_for(int M, int N, int K, int ctas, int& width) {
    const int lane = threadIdx.x % 32;
    Schedule mine{};
    const long long cost = lane < 6 ? plan_cost(M, N, K, ctas, persistent_ws::BN >> (lane / 2), lane % 2, mine) : -1;
    const int best = persistent_ws::cheapest_lane(cost < 0 ? 0x7fffffffffffffffLL : cost);  // lane 0's always runs
    width = persistent_ws::BN >> (best / 2);
    return Schedule{__shfl_sync(0xffffffffu, mine.tiles_m, best), __shfl_sync(0xffffffffu, mine.tiles_n, best),
                    __shfl_sync(0xffffffffu, mine.KT, best), __shfl_sync(0xffffffffu, mine.dp, best),
                    __shfl_sync(0xffffffffu, mine.sk, best)};
}

// Warp 0 prefetches the tensor maps, plans and sets up a ring of MAX_STAGES barrier pairs (the plan's width uses
// the first Ring<width>::STAGES); then warpgroup 0's first thread loads and warpgroups 1 and 2 multiply.
template <typename T>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, float* W, int M, int N, int K) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[MAX_STAGES], empty[MAX_STAGES];
    __shared__ Schedule planned;
    __shared__ int planned_width;
    const int tid = threadIdx.x, wg = tid / 128;
    if (tid < 32) {
        if (tid == 0) {
            prefetch_tensormap(tma_a);
            prefetch_tensormap(tma_b);
        }
        int width;
        const Schedule s = plan_for(M, N, K, gridDim.x, width);
        if (tid == 0) {
            planned = s;
            planned_width = width;
            ring_init<MAX_STAGES>(full, empty, 256);
        }
    }
    __syncthreads();
    const Schedule s = planned;
    const int width = planned_width;

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            if (width == 256) produce<256>(tma_a, tma_b, s, smem, full, empty);
            else if (width == 128) produce<128>(tma_a, tma_b, s, smem, full, empty);
            else produce<64>(tma_a, tma_b, s, smem, full, empty);
        }
    } else {
        setmaxnreg_inc<232>();
        if (width == 256) consume<T, 256>(s, smem, full, empty, C, W, M, N, wg - 1);
        else if (width == 128) consume<T, 128>(s, smem, full, empty, C, W, M, N, wg - 1);
        else consume<T, 64>(s, smem, full, empty, C, W, M, N, wg - 1);
    }
}
}  // namespace stream_k

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_stream_k(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* __restrict__ W,
           int M, int N, int K) {
    stream_k::run<T>(tma_a, tma_b, C, W, M, N, K);
}
