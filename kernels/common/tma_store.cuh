// A consumer warpgroup's 64 x WIDTH FP32 accumulators to C through shared memory and TMA stores (walk D 12): in
// 64 x 32 chunks (a 128-byte swizzle row of FP32), each written in TMA's swizzle to one of two 8 KB staging buffers
// (filled while the other's copy reads it), then stored by one thread as a bulk tensor copy that clips at M and N.
// The tensor map (farm/measure/tma.py, TMA_C): C as FP32, boxes of 64 rows x 32 columns, 128-byte swizzle.
#pragma once
#include "hopper.cuh"

namespace tma_store {
enum : int {
    ROWS = 64, COLS = 32,        // a box: a warpgroup's rows, one 128-byte swizzle row of FP32
    BUFFER = ROWS * COLS * 4,    // 8 KB, 1 KB aligned (8-row swizzle atoms)
    BYTES = 2 * 2 * BUFFER,      // two warpgroups x two buffers
};

// Named barrier 1 + c: consumer warpgroup c's 128 threads (0 is __syncthreads').
__device__ __forceinline__ void warpgroup_sync(int c) { asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory"); }

// EVICT (24): C's lines first out of L2, before the A and B lines the next waves read.
template <bool EVICT = false>
__device__ __forceinline__ void store_2d(const TensorMap& map, const unsigned char* src, int x, int y) {
    if constexpr (EVICT) {
        uint64_t policy;
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%1, %2}], [%3], %4;\n"
                     ::"l"(&map), "r"(x), "r"(y), "r"(smem_u32(src)), "l"(policy) : "memory");
    } else {
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                     ::"l"(&map), "r"(x), "r"(y), "r"(smem_u32(src)) : "memory");
    }
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// The issuing thread: until at most N of its bulk copies read shared memory.
template <int N>
__device__ __forceinline__ void wait_reads() { asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory"); }

// Before the block exits: this thread's bulk copies done
__device__ __forceinline__ void drain() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

// The thread's index read where used: offsets from threadIdx.x hoisted out of walk D 20's k loop spilled (NVRTC 13.0).
__device__ __forceinline__ int tid_here() {
    int t;
    asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(t));
    return t;
}

// Warpgroup c's accumulators (C's rows row0.. row0 + 63, columns col0.. col0 + WIDTH - 1) through its buffers
// `staging` (2 x BUFFER bytes); `chunk` counts its chunks across tiles. TID_HERE (20): tid_here(). EVICT: store_2d's.
template <int WIDTH, bool TID_HERE = false, bool EVICT = false>
__device__ __forceinline__ void store(const float (&acc)[WIDTH / 2], const TensorMap& map, unsigned char* staging, int& chunk, int row0,
                                      int col0, int c) {
    const int tid = TID_HERE ? tid_here() % 128 : threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
#pragma unroll
    for (int q = 0; q < WIDTH / COLS; ++q, ++chunk) {
        unsigned char* buffer = staging + (chunk % 2) * BUFFER;
        if (tid == 0) wait_reads<1>();  // the copy that read this buffer two chunks ago is done with it
        warpgroup_sync(c);
#pragma unroll
        for (int j = 0; j < COLS / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                // acc[4 * (4q + j) + 2h + {0, 1}]: row warp * 16 + lane / 4 + 8h, columns 32q + 8j + 2 * (lane % 4) + {0, 1}
                const int r = warp * 16 + lane / 4 + 8 * h, byte = j * 32 + 8 * (lane % 4);
                const int i = 4 * (4 * q + j) + 2 * h;
                *reinterpret_cast<float2*>(buffer + r * 128 + ((byte / 16) ^ (r % 8)) * 16 + byte % 16) = make_float2(acc[i], acc[i + 1]);
            }
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the generic writes, visible to TMA
        warpgroup_sync(c);
        if (tid == 0) store_2d<EVICT>(map, buffer, col0 + q * COLS, row0);
    }
}
}  // namespace tma_store
