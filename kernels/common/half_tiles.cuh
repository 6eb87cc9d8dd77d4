// Walk D's 17 (half_tiles): whole tiles of 64 rows x WIDTH (256, 128 or 64 columns), 12's pipeline otherwise (one
// producer thread, TMA loads into a ring, wgmma, TMA stores, a programmatic dependent launch as 15's). A stage holds
// one 64-row box of A (TMA_A's boxes: the stage's BM) and WIDTH / 64 boxes of B. Consumer warpgroup c multiplies the
// tile's columns [c * WIDTH / 2, (c + 1) * WIDTH / 2) with m64n(WIDTH / 2)k16; at 64 columns only warpgroup 0 works
// (wgmma's MN-major B needs whole 64-column swizzle rows) and the ring's empty barriers count its 128 threads.
#pragma once
#include "host_plan.cuh"

namespace half_tiles {
using persistent_ws::B_PANEL, persistent_ws::BK, persistent_ws::cdiv, persistent_ws::GROUP;
enum : int {
    ROWS = 64,
    A_BYTES = ROWS * BK * 2,                   // 8 KB
    RING_BYTES = persistent_ws::SMEM_BYTES,    // 12's ring; its staging buffers follow
    MAX_STAGES = RING_BYTES / (A_BYTES + BK * 64 * 2),  // 12 at 64 columns
};

template <int WIDTH>
struct Ring {
    enum : int { STAGE = A_BYTES + BK * WIDTH * 2, STAGES = RING_BYTES / STAGE };  // 12, 8, 4 stages
};

// Producer thread: this block's tiles t = blockIdx.x + i * gridDim.x in grouped order, every k tile of each.
template <int WIDTH>
__device__ __forceinline__ void produce(const TensorMap& tma_a, const TensorMap& tma_b, int tiles_m, int tiles_n, int KT,
                                        unsigned char* smem, uint64_t* full, uint64_t* empty) {
    constexpr int STAGES = Ring<WIDTH>::STAGES;
    int it = 0;
#pragma unroll 1
    for (int t = blockIdx.x; t < tiles_m * tiles_n; t += gridDim.x) {
        int tm, tn;
        grouped_tile<GROUP>(t, tiles_m, tiles_n, tm, tn);
#pragma unroll 1
        for (int kt = 0; kt < KT; ++kt, ++it) {
            const int st = it % STAGES;
            if (it >= STAGES) mbar_wait(&empty[st], (it / STAGES - 1) & 1);
            unsigned char* stage = smem + st * Ring<WIDTH>::STAGE;
            mbar_arrive_expect_tx(&full[st], Ring<WIDTH>::STAGE);
            tma_load_2d(stage, &tma_a, &full[st], kt * BK, tm * ROWS);
#pragma unroll
            for (int p = 0; p < WIDTH / 64; ++p)
                tma_load_2d(stage + A_BYTES + p * B_PANEL, &tma_b, &full[st], tn * WIDTH + p * 64, kt * BK);
        }
    }
}

// Consumer warpgroup c: its COLS = WIDTH / 2 columns (WIDTH at 64) of every tile, one wgmma group in flight (05's k
// loop), C through its staging buffers and TMA stores (12's).
template <typename T, int WIDTH>
__device__ __forceinline__ void consume(int tiles_m, int tiles_n, int KT, const unsigned char* smem, uint64_t* full, uint64_t* empty,
                                        const TensorMap& tma_c, unsigned char* staging, int c) {
    constexpr int STAGES = Ring<WIDTH>::STAGES, COLS = WIDTH == 64 ? 64 : WIDTH / 2;
    int it = 0, chunk = 0;
#pragma unroll 1
    for (int t = blockIdx.x; t < tiles_m * tiles_n; t += gridDim.x) {
        int tm, tn;
        grouped_tile<GROUP>(t, tiles_m, tiles_n, tm, tn);
        float acc[COLS / 2] = {};
#pragma unroll 1
        for (int kt = 0; kt < KT; ++kt, ++it) {
            const int st = it % STAGES;
            mbar_wait(&full[st], (it / STAGES) & 1);
            const unsigned char* stage = smem + st * Ring<WIDTH>::STAGE;
            wgmma_k_tile<COLS, BK, T>(acc, stage, stage + A_BYTES + c * (COLS / 64) * B_PANEL, B_PANEL);
            wgmma_wait<1>();
            if (kt > 0) mbar_arrive(&empty[(it - 1) % STAGES]);
        }
        wgmma_wait<0>();
        fence_acc(acc);
        mbar_arrive(&empty[(it - 1) % STAGES]);
        tma_store::store<COLS>(acc, tma_c, staging, chunk, tm * ROWS, tn * WIDTH + c * COLS, c);
    }
    if (threadIdx.x % 128 == 0) tma_store::drain();
}

// The block: setup, then the dependent launch's wait (15's), then the roles. Tensor maps: A in 64-row boxes, B in
// 64 x 64, C in 64 x 32 (farm/measure/tma.py).
template <typename T>
__device__ __forceinline__ void run(const TensorMap& tma_a, const TensorMap& tma_b, const TensorMap& tma_c, int M, int N, int K, int width) {
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[MAX_STAGES], empty[MAX_STAGES];
    const int tid = threadIdx.x, wg = tid / 128;
    if (tid == 0) {
        prefetch_tensormap(tma_a);
        prefetch_tensormap(tma_b);
        prefetch_tensormap(tma_c);
        ring_init<MAX_STAGES>(full, empty, width == 64 ? 128 : 256);  // the width uses the first Ring<width>::STAGES
    }
    __syncthreads();
    launch_dependents();
    grid_dependency_wait();
    const int tiles_m = cdiv(M, ROWS), tiles_n = (N + width - 1) >> (31 - __clz(width)), KT = cdiv(K, BK);  // width: a power of 2
    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            if (width == 256) produce<256>(tma_a, tma_b, tiles_m, tiles_n, KT, smem, full, empty);
            else if (width == 128) produce<128>(tma_a, tma_b, tiles_m, tiles_n, KT, smem, full, empty);
            else produce<64>(tma_a, tma_b, tiles_m, tiles_n, KT, smem, full, empty);
        }
    } else {
        setmaxnreg_inc<232>();
        unsigned char* staging = smem + RING_BYTES + (wg - 1) * 2 * tma_store::BUFFER;  // 12's, past the ring
        if (width == 256) consume<T, 256>(tiles_m, tiles_n, KT, smem, full, empty, tma_c, staging, wg - 1);
        else if (width == 128) consume<T, 128>(tiles_m, tiles_n, KT, smem, full, empty, tma_c, staging, wg - 1);
        else if (wg == 1) consume<T, 64>(tiles_m, tiles_n, KT, smem, full, empty, tma_c, staging, 0);
    }
}
}  // namespace half_tiles
