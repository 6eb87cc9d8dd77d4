// Walk C tensor-core pieces shared by the WMMA stages (half_c/02..04), written
// once over the 16-bit input type T (__half or __nv_bfloat16; FP32 accumulate):
//   WmmaTile   the block tile's shared-memory layout: As[BM][BK + 8], Bs[BK][BN + 8]
//   TileCopy   16-byte chunks global -> registers -> shared (plain loads)
//   warp_mma   one shared-memory k-slice through a warp's FM x FN 16x16x16 fragments
//   store_acc  the warp's accumulators to C through shared memory, guarded at the edges
//
// Padding rows by 8 elements (16 bytes) puts the 8 rows of each 8 x 16-byte
// fragment-load phase in 8 different 4-bank groups, and keeps every fragment
// 32-byte aligned (load_matrix_sync needs 256-bit aligned pointers and a
// stride that is a multiple of 8 elements): fragment rows start at multiples of
// 16 rows and 16 columns, i.e. 32 * stride and 32 bytes.
#pragma once
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace walkc {
namespace wmma = nvcuda::wmma;

template <typename T>
using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major>;
template <typename T>
using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major>;
using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

constexpr int VEC = 8;  // 16-bit elements per 16-byte chunk

template <int BM, int BN, int BK, int WM, int WN>
struct WmmaTile {
    static constexpr int LDA = BK + 8, LDB = BN + 8;             // padded row strides, in elements
    static constexpr int A_ELEMS = BM * LDA, STAGE_ELEMS = A_ELEMS + BK * LDB;
    static constexpr int STAGE_BYTES = 2 * STAGE_ELEMS;
    static constexpr int WARPS_N = BN / WN, WARPS = (BM / WM) * WARPS_N, THREADS = 32 * WARPS;
    static constexpr int FM = WM / 16, FN = WN / 16;             // fragments per warp
    static constexpr int SCRATCH_BYTES = WARPS * 16 * 16 * 4;     // edge epilogue: one 16x16 float tile per warp
    static constexpr int A_CHUNKS = BM * BK / VEC, B_CHUNKS = BK * BN / VEC;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "16x16x16 fragments");
    static_assert(THREADS <= 1024, "at most 1024 threads");
    static_assert(A_CHUNKS % THREADS == 0 && B_CHUNKS % THREADS == 0, "whole chunks per thread");
    static_assert(STAGE_BYTES % 32 == 0 && (2 * A_ELEMS) % 32 == 0, "stages and their B part stay 32-byte aligned");
    // The smem a kernel with `stages` buffers needs (the epilogue reuses the buffers).
    __host__ __device__ static constexpr int smem_bytes(int stages) {
        return stages * STAGE_BYTES > SCRATCH_BYTES ? stages * STAGE_BYTES : SCRATCH_BYTES;
    }
};

// Chunk c of this thread's share (c < CHUNKS / THREADS): A chunks run along k (BK / 8 per row),
// B chunks along n (BN / 8 per row), consecutive threads on consecutive chunks.
template <int BK>
__device__ __forceinline__ void a_chunk(int id, int& r, int& k) { r = id / (BK / VEC); k = id % (BK / VEC) * VEC; }
template <int BN>
__device__ __forceinline__ void b_chunk(int id, int& k, int& c) { k = id / (BN / VEC); c = id % (BN / VEC) * VEC; }

// A block's tile copy through registers: load() issues the 16-byte global loads
// (zero chunks outside A or B; with N and K multiples of 8 a chunk is all in or
// all out), store() writes them to one shared-memory stage.
template <typename T, int BM, int BN, int BK, int WM, int WN>
struct TileCopy {
    using L = WmmaTile<BM, BN, BK, WM, WN>;
    static constexpr int A_PER = L::A_CHUNKS / L::THREADS, B_PER = L::B_CHUNKS / L::THREADS;
    uint4 a[A_PER], b[B_PER];

    __device__ __forceinline__ void load(const T* __restrict__ A, const T* __restrict__ B, int M, int N, int K,
                                         int row0, int col0, int k0) {
        const uint4 zero = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
        for (int l = 0; l < A_PER; ++l) {
            int r, k;
            a_chunk<BK>(threadIdx.x + L::THREADS * l, r, k);
            r += row0; k += k0;
            a[l] = (r < M && k < K) ? *reinterpret_cast<const uint4*>(A + (size_t)r * K + k) : zero;
        }
#pragma unroll
        for (int l = 0; l < B_PER; ++l) {
            int k, c;
            b_chunk<BN>(threadIdx.x + L::THREADS * l, k, c);
            k += k0; c += col0;
            b[l] = (k < K && c < N) ? *reinterpret_cast<const uint4*>(B + (size_t)k * N + c) : zero;
        }
    }
    __device__ __forceinline__ void store(T* stage) const {
#pragma unroll
        for (int l = 0; l < A_PER; ++l) {
            int r, k;
            a_chunk<BK>(threadIdx.x + L::THREADS * l, r, k);
            *reinterpret_cast<uint4*>(stage + r * L::LDA + k) = a[l];
        }
#pragma unroll
        for (int l = 0; l < B_PER; ++l) {
            int k, c;
            b_chunk<BN>(threadIdx.x + L::THREADS * l, k, c);
            *reinterpret_cast<uint4*>(stage + L::A_ELEMS + k * L::LDB + c) = b[l];
        }
    }
};

// acc[i][j] += As[warp rows 16i..][k] * Bs[k][warp cols 16j..] over the BK of one stage.
// `as` points at the warp's first A row in the stage, `bs` at its first B column.
// The k-slice loop stays rolled: unrolled, ptxas hoists the next slice's fragment
// loads, and with 64 x 64 warp tiles (128 accumulator registers) bf16 spilled.
template <typename T, int BK, int LDA, int LDB, int FM, int FN>
__device__ __forceinline__ void warp_mma(FragC (&acc)[FM][FN], const T* as, const T* bs) {
#pragma unroll 1
    for (int kk = 0; kk < BK; kk += 16) {
        FragA<T> a[FM];
#pragma unroll
        for (int i = 0; i < FM; ++i) wmma::load_matrix_sync(a[i], as + 16 * i * LDA + kk, LDA);
#pragma unroll
        for (int j = 0; j < FN; ++j) {  // one B fragment live at a time: FM + 1 fragments, not FM + FN
            FragB<T> b;
            wmma::load_matrix_sync(b, bs + kk * LDB + 16 * j, LDB);
#pragma unroll
            for (int i = 0; i < FM; ++i) wmma::mma_sync(acc[i][j], a[i], b, acc[i][j]);
        }
    }
}

template <int FM, int FN>
__device__ __forceinline__ void zero_acc(FragC (&acc)[FM][FN]) {
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
}

// The warp's FM x FN accumulators to C at (r0, c0), through the warp's 16x16
// float scratch (1 KB, 32-byte aligned): store_matrix_sync there, then each lane
// copies 4 floats of rows lane/4 and lane/4 + 8 with one guarded float4 store
// (C + r*N + c is 16-byte aligned and wholly in or out of C when N % 8 == 0), so
// edge tiles need no second code path (a separate direct-store path for inside
// tiles made ptxas spill on sm_80). The caller must have finished every read of
// the shared memory `scratch` reuses.
template <int FM, int FN>
__device__ __forceinline__ void store_acc(const FragC (&acc)[FM][FN], float* __restrict__ C, int M, int N, int r0, int c0,
                                          float* scratch) {
    const int lane = threadIdx.x % 32, er = lane / 4, ec = lane % 4 * 4;
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) {
            wmma::store_matrix_sync(scratch, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            const int c = c0 + 16 * j + ec;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = r0 + 16 * i + er + 8 * h;
                if (r < M && c < N)
                    *reinterpret_cast<float4*>(C + (size_t)r * N + c) = *reinterpret_cast<const float4*>(scratch + (er + 8 * h) * 16 + ec);
            }
            __syncwarp();  // every lane has read the scratch before the next fragment overwrites it
        }
}
}  // namespace walkc
