// 08 tile_plan_fp8: 07 with a host plan above 128 tokens too: 128 x 256 or 128 x 128 tiles, K in 1 to 8 slices, the
// partials in the accumulators' order. Measured on an H100 (issue 32, run h100-llmf8, one repeat): 07 held 33-47 % of
// cuBLASLt FP8 at M = 1024 with N = 512 or 1024 (1024 x 512 x 3584: 20.1 us against 6.7; on the H200, h200-llmf8: 39.7
// against 6.8, below 03's 20.6). Where its time went: above 128 tokens 07 runs 05's path, 128 x 256 tiles
// with as many K slices as idle blocks (1024 x 512 x 3584: 16 tiles x 8 slices of 3.5 k tiles), its fix-up storing
// each slice's partial as an M x N FP32 plane, summed 64 columns at a time (8 planes of 2 MB through L2 for 5.5 MB
// of operands), each k tile 12 TMA issues in 07's 16- and 64-row boxes. Nsight Compute on the H200 at 1024 x 512 x
// 3584: 07 46.0 us, 16.8 MB of global loads, 19.0 MB of stores; cuBLASLt 8.6 us (nvjet 64x64, whole K, 2x1 clusters).
// Changes:
// - Above 128 tokens, tiles of 128 x BNT, BNT = 256 or 128 (each consumer warpgroup m64n256k32 or m64n128k32), K in
//   `slices`, both chosen on the host (kernels/hopper_fp8/tile_plan.py) with 07's cost model (waves x (k tiles
//   a unit + fix-up) x bytes a k tile): 1024 x 512 x 3584 is 32 tiles of 128 x 128 x 4 slices (7 k tiles each).
// - The partials in the accumulators' order (07's swapped::fragment_fixup for any accumulator count: float4 rows of
//   512 bytes a warp, the last to arrive loading every slice's quads at once), S x 64 KB a 128 x 128 tile, not S planes.
// A in 16-row boxes (rows below M only), B in 64-row boxes (07's geometry and grid); the ring as deep as 07's 216 KB
// allows (6 stages of 32 KB at BNT = 128, 4 of 48 KB at 256). Up to 128 tokens it is 07.
// Tried, not kept: the last slice keeping its accumulators, spinning (ld.acquire) until the other S - 1 had stored
// theirs (S - 1 partials moved, not S + 1): H200, 1 x 4096 x 4096 7.6 us (07's fix-up: 6.5), 128 x 4096 x 4096 15.1 (13.5).
// N % 8 == 0, K % 16 == 0, any M.
#include "split_k_fp8.cuh"
#include "swapped.cuh"

// The launch: 07's boxes (16 rows of A, 64 of B) and grid.
namespace f08 {
enum : int {
    BM = 16,
    BN = 64,
    SMEM_BYTES = swapped::RING_BYTES,
    WARPS = persistent_fp8::WARPS,
};

// Up to 128 tokens: 07's swapped pipeline on its host plan, met by swapped::fragment_fixup.
template <int TN>
__device__ __forceinline__ void run_swapped(const swapped::Fp8& ops, const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C,
                                            float* W, unsigned int* arrivals, int M, int N, int K, int bnt, int slices) {
    swapped::run<TN>(
        ops, tma_a, tma_b, C, M, N, K,
        [&] {
            if (threadIdx.x == 0) {
                prefetch_tensormap(tma_a);
                prefetch_tensormap(tma_b);
            }
            return swapped::Plan{bnt, slices};
        },
        [&](float(&acc)[TN / 2], int splits, int t, int z, int c, int n0) {
            const int w = c * 4 + threadIdx.x % 128 / 32;
            return swapped::fragment_fixup<TN / 2>(acc, W, &arrivals[t * WARPS + w], splits, persistent_fp8::cdiv(N, bnt), t, z, w);
        });
}

// Above 128 tokens: 128 x TBN tiles, as many stages as swapped::RING_BYTES holds, K in `slices`.
template <int TBN>
struct Tiles {
    enum : int {
        TBM = 128,
        A_BYTES = TBM * persistent_fp8::BK,
        STAGE_BYTES = A_BYTES + TBN * persistent_fp8::BK,
        STAGES = swapped::RING_BYTES / STAGE_BYTES,
    };
};

template <int TBN>
__device__ __forceinline__ void run_tiles(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, float* W,
                                          unsigned int* arrivals, const float* scale_a, const float* scale_b, int M, int N, int K,
                                          int slices) {
    using namespace persistent_fp8;
    using T = Tiles<TBN>;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[T::STAGES], empty[T::STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    const int tiles_m = cdiv(M, T::TBM), tiles_n = cdiv(N, TBN), tiles = tiles_m * tiles_n, KT = cdiv(K, BK), units = tiles * slices;

    if (tid == 0) {
        prefetch_tensormap(tma_a);
        prefetch_tensormap(tma_b);
        ring_init<T::STAGES>(full, empty, WARPS);
    }
    __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int it = 0;
#pragma unroll 1
            for (int u = blockIdx.x; u < units; u += gridDim.x) {
                const int t = u / slices, z = u % slices, k0 = z * KT / slices, k1 = (z + 1) * KT / slices;
                int tm, tn;
                grouped_tile<GROUP>(t, tiles_m, tiles_n, tm, tn);
                const int a_boxes = min(T::TBM / 16, cdiv(M - tm * T::TBM, 16));  // boxes wholly past M: never read
#pragma unroll 1
                for (int kt = k0; kt < k1; ++kt, ++it) {
                    const int s = it % T::STAGES;
                    if (it >= T::STAGES) mbar_wait(&empty[s], (it / T::STAGES - 1) & 1);
                    unsigned char* st = smem + s * T::STAGE_BYTES;
                    mbar_arrive_expect_tx(&full[s], a_boxes * swapped::A_BOX + TBN * BK);
#pragma unroll 1
                    for (int q = 0; q < a_boxes; ++q) tma_load_2d(st + q * swapped::A_BOX, &tma_a, &full[s], kt * BK, tm * T::TBM + q * 16);
#pragma unroll
                    for (int p = 0; p < TBN / 64; ++p)
                        tma_load_2d(st + T::A_BYTES + p * swapped::B_BOX, &tma_b, &full[s], kt * BK, tn * TBN + p * 64);
                }
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1, w = c * 4 + tid % 128 / 32;
        int it = 0;
#pragma unroll 1
        for (int u = blockIdx.x; u < units; u += gridDim.x) {
            const int t = u / slices, z = u % slices, k0 = z * KT / slices, k1 = (z + 1) * KT / slices;
            int tm, tn;
            grouped_tile<GROUP>(t, tiles_m, tiles_n, tm, tn);
            float acc[TBN / 2] = {};
#pragma unroll 1
            for (int kt = k0; kt < k1; ++kt, ++it) {
                const int s = it % T::STAGES;
                mbar_wait(&full[s], (it / T::STAGES) & 1);
                const unsigned char* st = smem + s * T::STAGE_BYTES;
                wgmma_fp8_k_tile<TBN, BK>(acc, st + c * 64 * BK, st + T::A_BYTES);
                wgmma_wait<1>();  // kt's group stays pending; kt-1's is done: release its stage
                if (kt > k0) release<1>(&empty[(it - 1) % T::STAGES]);
            }
            wgmma_wait<0>();
            fence_acc(acc);
            release<1>(&empty[(it - 1) % T::STAGES]);
            dequantise(acc, scale_a, scale_b);
            if (slices > 1 && !swapped::fragment_fixup<TBN / 2>(acc, W, &arrivals[t * WARPS + w], slices, tiles, t, z, w)) continue;
            store_acc<TBN>(acc, C, M, N, tm * T::TBM + c * 64, tn * TBN);
        }
    }
}
}  // namespace f08

__device__ unsigned int f08_arrivals[split_k_fp8::ARRIVALS];  // one per (tile, consumer warp), zero between launches

// tn: tokens a tile (16, 64 or 128; 0 above 128 tokens: 128-row tiles), bn: features a tile (swapped: 128 or 64;
// tiles: 256 or 128), slices: K slices, all from kernels/hopper_fp8/tile_plan.py.
__global__ void __launch_bounds__(persistent_fp8::THREADS, 1)
f_tile_plan_fp8(const __grid_constant__ TensorMap tma_a, const __grid_constant__ TensorMap tma_b, float* __restrict__ C, float* W,
                const float* __restrict__ scale_a, const float* __restrict__ scale_b, int M, int N, int K, int tn, int bn, int slices) {
    const swapped::Fp8 ops{scale_a, scale_b};
    if (tn == 16) f08::run_swapped<16>(ops, tma_a, tma_b, C, W, f08_arrivals, M, N, K, bn, slices);
    else if (tn == 64) f08::run_swapped<64>(ops, tma_a, tma_b, C, W, f08_arrivals, M, N, K, bn, slices);
    else if (tn == 128) f08::run_swapped<128>(ops, tma_a, tma_b, C, W, f08_arrivals, M, N, K, bn, slices);
    else if (bn == 128) f08::run_tiles<128>(tma_a, tma_b, C, W, f08_arrivals, scale_a, scale_b, M, N, K, slices);
    else f08::run_tiles<256>(tma_a, tma_b, C, W, f08_arrivals, scale_a, scale_b, M, N, K, slices);
}
