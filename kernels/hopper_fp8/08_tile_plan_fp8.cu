// 08 tile_plan_fp8: 07 with a host plan above 128 tokens too, and a split-K fix-up that moves S - 1 partials, not S + 1.
// Measured on an H100 (issue 32, run h100-llmf8, one repeat): 07 reached 53-82 % of cuBLASLt FP8 at M = 128 (128 x 4096
// x 4096: 13.2 us against 7.0) and 33-47 % at M = 1024 with N = 512 or 1024 (1024 x 512 x 3584: 20.1 us against 6.7).
// Where the time went, from 07's code: above 128 tokens 07 ran 05's 128 x 256 tiles with 05's plan (as many K slices as
// idle blocks, up to 8) and 05's fix-up, which stores every slice's partial as a whole M x N FP32 plane and has the last
// warp read all S of them back: at 1024 x 512 x 3584, 16 tiles x 8 slices, 16 MB of partials written and read through
// L2 for 5.5 MB of operands (and 12 TMA issues a k tile in 07's small boxes). Up to 128 tokens 07's swapped fix-up moves
// S + 1 partial tiles a tile (every slice stores, the last one loads all S back, its own included). Two changes:
// - Above 128 tokens, tiles of 128 x BN with BN = 256 or 128 (consumer warpgroups of m64n256k32 or m64n128k32), K in 1
//   to 8 slices, tile and slices chosen on the host (kernels/hopper_fp8/tile_plan.py) from the same kind of cost as 07's
//   swapped plan; the partials kept in the accumulators' order (07's float4 rows), sized from the plan. A comes in 16-row
//   boxes (only those holding rows below M are loaded), B in 64-row boxes: 07's launch geometry, so 07's grid.
// - The fix-up, both paths: the last slice of a tile (z = S - 1, the highest unit of the tile, so it waits only on units
//   walked before it: no deadlock however many waves) keeps its accumulators; slices 0 .. S - 2 store theirs and count
//   their arrival (fence, then an atomic add on a counter per tile and consumer warp); the last slice's warp spins on
//   the counter (ld.acquire) until S - 1 have arrived, resets it for the next launch, loads the S - 1 partials, all in
//   flight at once, and adds them in slice order, its own last. S - 1 partials stored and loaded, where 07 stored S and
//   loaded S, and no slice waits for the slowest to decide who sums.
// Up to 128 tokens it is 07's swapped pipeline (kernels/common/swapped.cuh) with this fix-up. N % 8 == 0, K % 16 == 0,
// any M.
#include "split_k_fp8.cuh"
#include "swapped.cuh"

// The launch (kernels/sources.py): 07's boxes (16 rows of A, 64 of B) and grid.
namespace f08 {
enum : int {
    BM = 16,
    BN = 64,
    SMEM_BYTES = swapped::RING_BYTES,
    WARPS = persistent_fp8::WARPS,
};

__device__ __forceinline__ unsigned int load_acquire(const unsigned int* p) {
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// One consumer warp's fix-up of slice z of tile t (of `tiles`), R accumulators a lane in wgmma's order. Slices below
// splits - 1 store theirs as R / 4 float4 a lane at ((z * tiles + t) * WARPS + w) * R / 4 * 32 + q * 32 + lane (512 bytes
// a warp instruction), count the arrival and return false. The last slice waits for splits - 1 arrivals, zeroes the
// counter, adds the stored slices in order and its own last, and returns true: it stores C.
template <int R>
__device__ __forceinline__ bool last_slice_sums(float (&acc)[R], float* W, unsigned int* counter, int splits, int tiles, int t, int z,
                                                int w) {
    enum : int { Q = R / 4, CHUNK = Q < 4 ? Q : (R >= 64 ? 1 : 4), MAX_STORED = swapped::MAX_SLICES - 1 };
    const int lane = threadIdx.x % 32;
    const size_t plane = (size_t)tiles * WARPS * Q * 32;  // float4s a slice
    float4* mine = reinterpret_cast<float4*>(W) + ((size_t)t * WARPS + w) * Q * 32 + lane;
    if (z < splits - 1) {
#pragma unroll
        for (int q = 0; q < Q; ++q) __stcg(mine + z * plane + q * 32, make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]));
        __threadfence();  // this lane's partial is visible device-wide before its warp's arrival is counted
        __syncwarp();
        if (lane == 0) atomicAdd(counter, 1u);
        return false;
    }
    if (lane == 0) {
        while (load_acquire(counter) < (unsigned int)splits - 1) {
        }
        *counter = 0;  // every other slice has arrived: nothing else touches it in this launch
    }
    __syncwarp();
    __threadfence();
#pragma unroll
    for (int q0 = 0; q0 < Q; q0 += CHUNK) {
        float4 part[MAX_STORED][CHUNK];
#pragma unroll
        for (int p = 0; p < MAX_STORED; ++p)
#pragma unroll
            for (int j = 0; j < CHUNK; ++j)
                if (p < splits - 1) part[p][j] = __ldcg(mine + p * plane + (q0 + j) * 32);  // through L2: other SMs wrote them
#pragma unroll
        for (int j = 0; j < CHUNK; ++j) {
            float* own = &acc[4 * (q0 + j)];
            float4 sum = part[0][j];
#pragma unroll
            for (int p = 1; p < MAX_STORED; ++p)
                if (p < splits - 1) {
                    sum.x += part[p][j].x;
                    sum.y += part[p][j].y;
                    sum.z += part[p][j].z;
                    sum.w += part[p][j].w;
                }
            own[0] = sum.x + own[0];
            own[1] = sum.y + own[1];
            own[2] = sum.z + own[2];
            own[3] = sum.w + own[3];
        }
    }
    return true;
}

// Up to 128 tokens: 07's swapped pipeline on its host plan, met by last_slice_sums.
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
            return last_slice_sums<TN / 2>(acc, W, &arrivals[t * WARPS + w], splits, persistent_fp8::cdiv(N, bnt), t, z, w);
        });
}

// Above 128 tokens: 128 x TBN tiles (TBN = 256 or 128), A in 16-row boxes, B in 64-row boxes, as many stages as
// swapped::RING_BYTES holds (4 at TBN = 256, 6 at 128), K in `slices`.
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
            if (slices > 1 && !last_slice_sums<TBN / 2>(acc, W, &arrivals[t * WARPS + w], slices, tiles, t, z, w)) continue;
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
