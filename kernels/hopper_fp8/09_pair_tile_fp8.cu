// 09 pair_tile_fp8: 07 with a third kind of tile, 64 rows of C by 64 or 128 columns, in a 2-CTA cluster whose CTAs take
// vertically adjacent tiles and share each k tile's B box (TMA multicast), K whole or in slices; chosen on the host
// (kernels/hopper_fp8/pair_plan.py) where the 128-row and swapped tiles leave SMs idle or move their operands through L2
// more than once. Measured on the H200 (issue 32, runs h200-llmf8 and h200-llmf8-08):
// the best of 07 and 08 held 57-60 % of cuBLASLt FP8 at M = 128 with N <= 4096 and 54-63 % at M = 1024 with N <= 1024.
// 08's plan sweep (.ci/f08_sweep.py) found a unit's time mostly fixed (about 9.9 us plus 0.37 us a 128 x 128 k tile at
// 1024 x 512 x 3584), the fix-up's round trips through L2 the largest part, and cuBLASLt's kernel there
// (nvjet_sm90_qqsss_64x64_128x13_2x1) with 64 x 64 tiles, K whole, 13 stages and 2 x 1 clusters: 128 tiles on 132 SMs
// without any fix-up. Changes:
// - 64-row tiles (wgmma m64n64k32 or m64n128k32), so M = 1024 with N = 512 is 128 tiles and K can stay whole; both
//   consumer warpgroups on every tile, warpgroup 1 the even k tiles of a unit and warpgroup 2 the odd ones (two wgmma
//   chains in flight where one m64n64 chain leaves the tensor pipe waiting), warpgroup 2's sum handed over in shared
//   memory and added once; the ring as deep as 07's 216 KB holds beside that (12 stages of 16 KB at 64 columns, 7 of
//   24 KB at 128).
// - Clusters of two CTAs on tiles one above the other: box p of k tile kt's B is loaded by CTA (kt + p) % 2 and
//   multicast into both (04's scheme), so the pair reads B from L2 once; a stage is released on both CTAs' empty
//   barriers (either producer may refill it in both). A tile row past M (the pair's lower tile at an odd count of 64-row
//   tiles) still takes its share of B's loads; its A boxes wholly past M are never loaded and its C never stored.
// - Where K is sliced, 07's fix-up in the accumulators' order (swapped::fragment_fixup, 32 or 64 accumulators a lane).
// Measured (NVIDIA H200, one call, kernels/hopper_fp8/README.md "09 pair_tile_fp8"): not a winner. Pair tiles take
// 0.4-0.55 us a k tile whatever their width (64 x 64: 1 MFLOP, 0.065 us of tensor work), so with K whole they run at
// 22-56 % of cuBLASLt FP8, whose kernels at these shapes have the same tile, cluster and ring (nvjet 64x64_128x13_2x1);
// sliced, they beat 07 and 08 at 128 x 512 x 3584 alone (66 % against 57 %). A first version with one consumer
// warpgroup (H100, first call) was no faster per k tile.
// Up to 128 tokens the plan may keep 07's swapped tiles, and above it 07's 128 x 256 tiles (05's path) where those fill
// the SMs; both run as in 07, under the cluster launch but not using it. N % 8 == 0, K % 16 == 0, any M.
#include "split_k_fp8.cuh"
#include "swapped.cuh"

// The launch (kernels/sources.py): 07's boxes (16 rows of A, 64 of B) and grid, in clusters of two.
namespace f09 {
enum : int {
    BM = 16,
    BN = 64,
    SMEM_BYTES = swapped::RING_BYTES,
    CLUSTER = 2,
    TM = 64,  // rows of C a pair tile
    GROUP = 8,  // tile pairs a group of the walk (grouped_tile)
    WARPS = persistent_fp8::WARPS,  // consumer warps a tile in the fix-up's layout (a pair tile uses the first 4)
};

// A stage of a 64 x TBN tile: 64 rows of A in four 16-row boxes, then TBN rows of B in 64-row boxes; after the ring,
// the 64 x TBN FP32 sum that consumer warpgroup 1 hands to warpgroup 0.
template <int TBN>
struct Pair {
    enum : int {
        A_BYTES = TM * persistent_fp8::BK,
        STAGE_BYTES = A_BYTES + TBN * persistent_fp8::BK,
        HAND_BYTES = TM * TBN * 4,
        STAGES = (swapped::RING_BYTES - HAND_BYTES) / STAGE_BYTES,  // 12 at 64 columns, 7 at 128
        B_BOXES = TBN / 64,
    };
};

// Consumer warpgroups 1 and 2 (bar.sync 1 and 2, 256 threads): the hand-over of warpgroup 2's sum.
__device__ __forceinline__ void consumers_sync(int id) { asm volatile("bar.sync %0, 256;\n" ::"r"(id) : "memory"); }

// Unit u of the pair walk -> this CTA's tile (index t over the pairs' 2 x pairs_m x tiles_n tiles), its first row and
// column, the unit's slice z and k tiles [k0, k1).
__device__ __forceinline__ void pair_unit(int u, int slices, int pairs_m, int tiles_n, int KT, uint32_t rank, int tbn, int& t,
                                          int& z, int& row0, int& col0, int& k0, int& k1) {
    const int p = u / slices;
    z = u % slices;
    int pm, tn;
    grouped_tile<GROUP>(p, pairs_m, tiles_n, pm, tn);
    const int tm = 2 * pm + (int)rank;
    t = tm * tiles_n + tn;
    row0 = tm * TM;
    col0 = tn * tbn;
    k0 = z * KT / slices;
    k1 = (z + 1) * KT / slices;
}

template <int TBN>
__device__ __forceinline__ void run_pairs(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, float* W,
                                          unsigned int* arrivals, const float* scale_a, const float* scale_b, int M, int N, int K,
                                          int slices) {
    using namespace persistent_fp8;
    using P = Pair<TBN>;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[P::STAGES], empty[P::STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const uint32_t rank = cluster_rank();
    const int pairs_m = cdiv(M, CLUSTER * TM), tiles_n = cdiv(N, TBN), KT = cdiv(K, BK), units = pairs_m * tiles_n * slices;
    const int tiles = CLUSTER * pairs_m * tiles_n, first = blockIdx.x / CLUSTER, step = gridDim.x / CLUSTER;

    if (tid == 0) {
        prefetch_tensormap(tma_a);
        prefetch_tensormap(tma_b);
        ring_init<P::STAGES>(full, empty, CLUSTER * 4);  // the four consumer warps of both CTAs
    }
    cluster_sync();  // the peer's barriers are initialised before its multicasts arrive on them

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int it = 0;
#pragma unroll 1
            for (int u = first; u < units; u += step) {
                int t, z, row0, col0, k0, k1;
                pair_unit(u, slices, pairs_m, tiles_n, KT, rank, TBN, t, z, row0, col0, k0, k1);
                const int a_boxes = max(0, min(TM / 16, cdiv(M - row0, 16)));  // boxes wholly past M: never read
#pragma unroll 1
                for (int kt = k0; kt < k1; ++kt, ++it) {
                    const int s = it % P::STAGES;
                    if (it >= P::STAGES) mbar_wait(&empty[s], (it / P::STAGES - 1) & 1);
                    unsigned char* st = smem + s * P::STAGE_BYTES;
                    mbar_arrive_expect_tx(&full[s], a_boxes * swapped::A_BOX + TBN * BK);  // own A, all of B
#pragma unroll 1
                    for (int q = 0; q < a_boxes; ++q) tma_load_2d(st + q * swapped::A_BOX, &tma_a, &full[s], kt * BK, row0 + q * 16);
#pragma unroll
                    for (int p = 0; p < P::B_BOXES; ++p)
                        if ((kt + p) % CLUSTER == (int)rank)
                            tma_load_2d_multicast(st + P::A_BYTES + p * swapped::B_BOX, &tma_b, &full[s], kt * BK, col0 + p * 64,
                                                  (1 << CLUSTER) - 1);
                }
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1, w = tid % 128 / 32;
        float* hand = reinterpret_cast<float*>(smem + P::STAGES * P::STAGE_BYTES) + tid % 128;
        int it = 0;
#pragma unroll 1
        for (int u = first; u < units; u += step) {
            int t, z, row0, col0, k0, k1;
            pair_unit(u, slices, pairs_m, tiles_n, KT, rank, TBN, t, z, row0, col0, k0, k1);
            float acc[TBN / 2] = {};
            int held = -1;  // the stage of this warpgroup's previous k tile, released once the next one is queued
#pragma unroll 1
            for (int kt = k0; kt < k1; ++kt, ++it) {
                if ((kt - k0) % 2 != c) continue;  // the other consumer's k tile
                const int s = it % P::STAGES;
                mbar_wait(&full[s], (it / P::STAGES) & 1);
                const unsigned char* st = smem + s * P::STAGE_BYTES;
                wgmma_fp8_k_tile<TBN, BK>(acc, st, st + P::A_BYTES);
                wgmma_wait<1>();  // kt's group stays pending; the previous one is done: release its stage in both CTAs
                if (held >= 0) release<CLUSTER>(&empty[held]);
                held = s;
            }
            wgmma_wait<0>();
            fence_acc(acc);
            if (held >= 0) release<CLUSTER>(&empty[held]);
            if (c == 1) {
#pragma unroll
                for (int i = 0; i < TBN / 2; ++i) hand[i * 128] = acc[i];
            }
            consumers_sync(1);  // warpgroup 2's sum is in shared memory
            if (c == 1) {
                consumers_sync(2);  // warpgroup 1 has read it: the next unit may overwrite it
                continue;
            }
#pragma unroll
            for (int i = 0; i < TBN / 2; ++i) acc[i] += hand[i * 128];  // even k tiles + odd k tiles
            consumers_sync(2);
            dequantise(acc, scale_a, scale_b);
            if (slices > 1 && !swapped::fragment_fixup<TBN / 2>(acc, W, &arrivals[t * WARPS + w], slices, tiles, t, z, w)) continue;
            store_acc<TBN>(acc, C, M, N, row0, col0);
        }
    }
    cluster_sync();  // no CTA exits while its peer may still multicast into its shared memory or arrive on its barriers
}
}  // namespace f09

__device__ unsigned int f09_arrivals[split_k_fp8::ARRIVALS];  // one per (tile, consumer warp), zero between launches

// tn: tokens a swapped tile (16, 64 or 128), else 0; tm: rows of C a tile where tn is 0 (64: pair tiles; 128: 05's
// 128 x 256 tiles); bn: features (swapped: 128 or 64) or columns (pair tiles: 128 or 64) a tile; slices: K slices (05's
// path: its slices at most); all from kernels/hopper_fp8/pair_plan.py.
__global__ void __cluster_dims__(f09::CLUSTER, 1, 1) __launch_bounds__(persistent_fp8::THREADS, 1)
f_pair_tile_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* W,
                const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K, int tn, int tm, int bn,
                int slices) {
    const swapped::Fp8 ops{scale_a, scale_b};
    if (tn == 16) swapped::run_planned<16>(ops, tma_a, tma_b, C, W, f09_arrivals, M, N, K, bn, slices);
    else if (tn == 64) swapped::run_planned<64>(ops, tma_a, tma_b, C, W, f09_arrivals, M, N, K, bn, slices);
    else if (tn == 128) swapped::run_planned<128>(ops, tma_a, tma_b, C, W, f09_arrivals, M, N, K, bn, slices);
    else if (tm == 128) split_k_fp8::run<f09::BM, f09::BN>(tma_a, tma_b, C, W, f09_arrivals, scale_a, scale_b, M, N, K, slices);
    else if (bn == 128) f09::run_pairs<128>(tma_a, tma_b, C, W, f09_arrivals, scale_a, scale_b, M, N, K, slices);
    else f09::run_pairs<64>(tma_a, tma_b, C, W, f09_arrivals, scale_a, scale_b, M, N, K, slices);
}
