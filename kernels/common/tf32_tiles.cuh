// Building blocks of the walk-B TF32 ladder (kernels/tf32/): 128x128x16 block tiles,
// 256 threads as 2 x 4 warps, each warp 64x32 of C as 4 x 4 mma.m16n8k8 tiles. Swizzled
// shared-memory layouts and their fragment addresses, tile copies, the ldmatrix + mma k tile
// of a warp and the guarded C store; the stage files compose them and say why.
//
// These were factored out with every stage's CUBIN unchanged, and NVVM is sensitive
// to where values live: arrays a helper fills (B fragments, A fragment, B elements) are the
// caller's locals, since declared inside a force-inlined helper they reorder the kernel's
// stack slots and renumber the accumulator registers; and cp_async_tiles_bcf takes its roles
// by reference for a [&] lambda caller (see there). Either change gives another CUBIN.
#pragma once
#include "mma_tf32.cuh"
#include "ptx.cuh"

// ---- shared-memory layouts --------------------------------------------------

// Word of (row, col) in a 128 x 16 tile, S(row) XORed into the chunk bits 2..4 (01_tf32_bt_swizzle.cu): conflict-free, chunks whole.
__device__ __forceinline__ int swizzled_128x16_word(int row, int col) {
    const int s = (((row >> 1) ^ (row >> 3)) & 3) | (row & 4);
    return (row * 16 + col) ^ (s << 2);
}

// Word of B(k, n) in an untransposed 16 x 128 tile, k % 4 XORed into n's bits 3..4 (03_tf32_swizzle_bcf.cu): conflict-free.
__device__ __forceinline__ int swizzled_16x128_word(int k, int n) { return k * 128 + (n ^ ((k & 3) << 3)); }

// A's ldmatrix.x4 word at (mi, ks) from a_frag, the lane's word at mi = ks = 0: the swizzle makes them an XOR and an offset.
__device__ __forceinline__ int swizzled_a_frag_word(int a_frag, int mi, int ks) {
    return (a_frag ^ (((mi ^ ks) & 1) << 3)) + 256 * mi;
}

// Transposed B's (Bs[n][k]) ldmatrix.x2 word at (ni, ks) from b_frag, the lane's word at ni = ks = 0, the same way.
__device__ __forceinline__ int swizzled_bt_frag_word(int b_frag, int ni, int ks) {
    return (b_frag ^ ((ni ^ 2 * ks) << 2)) + 128 * ni;
}

// Word of B's transposing store (n 4 b_n + j, k b_k + 8 i) from b_store at (4 b_n, b_k): one live address for all eight.
__device__ __forceinline__ int swizzled_bt_store_word(int b_store, int i, int j) { return b_store ^ (16 * j) ^ ((j >> 1) << 2) ^ (8 * i); }

// ---- tile copies -------------------------------------------------------------

// Rounds one LDG.128 of B (n .. n+3 at one k) to TF32 once and stores it transposed to smem[word(j)], for ldmatrix's k-rows.
template <class Word>
__device__ __forceinline__ void store_tf32_transposed(float* smem, const float (&e)[4], Word word) {
#pragma unroll
    for (int j = 0; j < 4; ++j) smem[word(j)] = __uint_as_float(to_tf32(e[j]));
}

// Both tiles at k0 by 16-byte cp.async, no register staging (bcf): per i, A chunk (a_r + 64 i, 4 a_c), B chunk (b_k + 8 i,
// 4 lane), zero-filled out of range; tiles move on. Role: int, or const int& from a [&] lambda (else sm_120 flips the tests).
template <class Role = int>
__device__ __forceinline__ void cp_async_tiles_bcf(float* smem, int s_off, int a_dst, int b_dst, const float* A, const float* B,
                                                   const float*& a_tile, const float*& b_tile, int a_off, int b_off,
                                                   const bool (&a_row_ok)[2], bool b_col_ok, Role a_c, Role b_k, int k0, int N, int K) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const bool a_ok = a_row_ok[i] && k0 + 4 * a_c < K;
        cp_async_16(&smem[s_off + a_dst + 1024 * i], a_ok ? a_tile + (a_off + 64 * i * K) : A, a_ok);
        const bool b_ok = b_col_ok && k0 + b_k + 8 * i < K;
        cp_async_16(&smem[s_off + b_dst + 1024 * i], b_ok ? b_tile + (b_off + 8 * i * N) : B, b_ok);
    }
    a_tile += 16;
    b_tile += (size_t)16 * N;
}

// ---- warp tile: mma and C store --------------------------------------------

// A warp's 64 x 32 over a 16-deep k tile: per k step of 8, fetch_b fills the 4 B fragments once (held in registers), then
// A per 16 rows by ldmatrix.x4 at a_addr(mi, ks), cvt.rna to TF32, 4 mma. b and a are the caller's (see the top).
template <class FetchB, class AAddr>
__device__ __forceinline__ void mma_warp_tile_64x32_k16(float (&acc)[4][4][4], unsigned (&b)[4][2], unsigned (&a)[4], FetchB fetch_b,
                                                        AAddr a_addr) {
#pragma unroll
    for (int ks = 0; ks < 2; ++ks) {
        fetch_b(b, ks);
#pragma unroll
        for (int mi = 0; mi < 4; ++mi) {
            ldmatrix_x4(a, a_addr(mi, ks));
#pragma unroll
            for (int r = 0; r < 4; ++r) a[r] = to_tf32(__uint_as_float(a[r]));
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) mma_tf32_16x8x8(acc[mi][ni], a, b[ni]);
        }
    }
}

// Untransposed B's 4 fragments at ks by 32-bit loads from b_frag (ldmatrix cannot transpose 32-bit words), cvt.rna to TF32.
__device__ __forceinline__ void lds_swizzled_b_frags_tf32(unsigned (&b)[4][2], const float* smem, int s_off, int b_frag, int ks) {
#pragma unroll
    for (int ni = 0; ni < 4; ++ni)
#pragma unroll
        for (int h = 0; h < 2; ++h) b[ni][h] = to_tf32(smem[s_off + (b_frag ^ (8 * ni)) + 1024 * ks + 512 * h]);
}

// Stores a warp's 64 x 32 of C as float2 (the C fragment's 2 adjacent columns), guarded by M and N.
__device__ __forceinline__ void store_c_warp_tile_64x32(float* C, const float (&acc)[4][4][4], int M, int N, int row0, int col0,
                                                        int warp_m, int warp_n, int lane) {
    const int g = lane / 4, tq = lane % 4;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) {
        const int r = row0 + warp_m * 64 + mi * 16 + g;
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            const int c = col0 + warp_n * 32 + ni * 8 + 2 * tq;  // even, and N % 4 == 0: c < N covers c + 1
            if (c < N) {
                if (r < M) *reinterpret_cast<float2*>(&C[(size_t)r * N + c]) = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
                if (r + 8 < M) *reinterpret_cast<float2*>(&C[(size_t)(r + 8) * N + c]) = make_float2(acc[mi][ni][2], acc[mi][ni][3]);
            }
        }
    }
}
