// A consumer warpgroup's 64 x WIDTH FP32 accumulators to C through shared memory and TMA stores (walk D's 12): the
// tile leaves in 64 x 32 chunks (one 128-byte swizzle row of FP32 a row), each written to one of the warpgroup's two
// 8 KB staging buffers in TMA's 128-byte swizzle, then stored by one thread as a single bulk tensor copy; TMA clips
// rows past M and columns past N. Two buffers: the warpgroup fills one while the previous chunk's copy reads the
// other. The tensor map (farm/measure/tma.py, TMA_C): C as FP32, boxes of 64 rows x 32 columns, 128-byte swizzle.
#pragma once
#include "hopper.cuh"

namespace tma_store {
enum : int {
    ROWS = 64, COLS = 32,        // a box: a warpgroup's rows, one 128-byte swizzle row of FP32
    BUFFER = ROWS * COLS * 4,    // 8 KB, 1 KB aligned (8-row swizzle atoms)
    BYTES = 2 * 2 * BUFFER,      // two consumer warpgroups x two buffers
};

// Named barrier 1 + c: the 128 threads of consumer warpgroup c (barrier 0 is __syncthreads').
__device__ __forceinline__ void warpgroup_sync(int c) { asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory"); }

__device__ __forceinline__ void store_2d(const TensorMap& map, const unsigned char* src, int x, int y) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"(&map), "r"(x), "r"(y), "r"(smem_u32(src)) : "memory");
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

// The issuing thread: until at most N of its bulk copies still read shared memory.
template <int N>
__device__ __forceinline__ void wait_reads() { asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory"); }

// Before the block exits: every bulk copy of this thread complete (its shared memory is about to go away).
__device__ __forceinline__ void drain() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

// The thread's index read where it is used: offsets made from threadIdx.x are hoisted out of a persistent loop, and
// beside walk D 20's 192 accumulators they held registers across the k loop (NVRTC 13.0 spilled them).
__device__ __forceinline__ int tid_here() {
    int t;
    asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(t));
    return t;
}

// Warpgroup c's accumulators (rows row0.. row0 + 63 of C, columns col0.. col0 + WIDTH - 1) through its buffers
// `staging` (2 x BUFFER bytes). `chunk` counts this warpgroup's chunks across tiles, so the buffers alternate.
// TID_HERE (20): tid_here().
template <int WIDTH, bool TID_HERE = false>
__device__ __forceinline__ void store(const float (&acc)[WIDTH / 2], const TensorMap& map, unsigned char* staging, int& chunk, int row0,
                                      int col0, int c) {
    const int tid = TID_HERE ? tid_here() % 128 : threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
#pragma unroll
    for (int q = 0; q < WIDTH / COLS; ++q, ++chunk) {
        unsigned char* buffer = staging + (chunk % 2) * BUFFER;
        if (tid == 0) wait_reads<1>();  // the copy that last read this buffer (two chunks ago) is done with it
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
        if (tid == 0) store_2d(map, buffer, col0 + q * COLS, row0);
    }
}
}  // namespace tma_store
