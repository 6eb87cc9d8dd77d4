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
// The pipeline, the schedule and the fix-up are kernels/common/stream_k.cuh (shared with 11); the plan is here.
#include "stream_k.cuh"

// The persistent grid: one block per SM wherever a 128x8 strip count allows (stream-K wants every SM, however few
// tiles; kernels/sources.py reads BM and BN here before the header's 128x256 ring's).
enum : int { BM = 128, BN = 8 };

namespace stream_k {
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
    const operands::Bit16<T> ops{};

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            if (width == 256) produce<256>(ops, tma_a, tma_b, s, smem, full, empty);
            else if (width == 128) produce<128>(ops, tma_a, tma_b, s, smem, full, empty);
            else produce<64>(ops, tma_a, tma_b, s, smem, full, empty);
        }
    } else {
        setmaxnreg_inc<232>();
        if (width == 256) consume<256>(ops, s, smem, full, empty, C, W, M, N, wg - 1);
        else if (width == 128) consume<128>(ops, s, smem, full, empty, C, W, M, N, wg - 1);
        else consume<64>(ops, s, smem, full, empty, C, W, M, N, wg - 1);
    }
}
}  // namespace stream_k

template <typename T>
__global__ void __launch_bounds__(persistent_ws::THREADS, 1)
d_stream_k(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* __restrict__ W,
           int M, int N, int K) {
    stream_k::run<T>(tma_a, tma_b, C, W, M, N, K);
}
