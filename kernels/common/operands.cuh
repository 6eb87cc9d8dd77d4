// The operands of a precision, for pipelines that run both walk D's 16-bit types and walk F's FP8 (swapped.cuh,
// stream_k.cuh). Both move 128-byte rows of K a k tile (64 16-bit or 128 FP8 elements) in 64-row boxes of B, so a
// box and a stage have the same bytes in both; what differs is B's layout, the wgmma and the scales:
//   Fp8        walk F: B stored N x K, both operands K-major; the accumulators dequantised by the per-tensor scales
//   Bit16<T>   walk D: B stored K x N, its 64 x 64 boxes read MN-major; no scales
#pragma once
#include "hopper_fp8.cuh"

namespace operands {
enum : int { B_BOX = 64 * 128 };  // one box of B: 64 rows x 128 bytes

// Walk F's operands: A E4M3, B E4M3 or E5M2 (FP8_B_E5M2), K-major both, B stored N x K; a k tile is 128 elements of K.
struct Fp8 {
    enum : int { K_TILE = 128 };
    const float* scale_a;
    const float* scale_b;
    // The box of B holding features [f0, f0 + 64) of k tile kt.
    __device__ __forceinline__ void load_b(void* dst, const TensorMap* map, uint64_t* bar, int kt, int f0) const {
        tma_load_2d(dst, map, bar, kt * K_TILE, f0);
    }
    // Swapped (C^T = B^T A^T): a k tile of a warpgroup's 64 features (`b`: its box of B) by TN tokens (`a`: A's boxes).
    template <int TN>
    __device__ __forceinline__ void k_tile(float (&acc)[TN / 2], const unsigned char* b, const unsigned char* a) const {
        wgmma_fp8_k_tile<TN, K_TILE, true>(acc, b, a);  // `b` holds the product's B: its format first
    }
    // Not swapped: a k tile of a warpgroup's 64 rows of A (`a`) by N columns (`b`: N rows of B, boxes end to end).
    template <int N>
    __device__ __forceinline__ void rows_k_tile(float (&acc)[N / 2], const unsigned char* a, const unsigned char* b) const {
        wgmma_fp8_k_tile<N, K_TILE>(acc, a, b);
    }
    template <int R>
    __device__ __forceinline__ void scale(float (&acc)[R]) const {
        dequantise(acc, scale_a, scale_b);
    }
};

// Walk D's operands: BF16 or FP16 (T), A K-major, B stored K x N and read MN-major; a k tile is 64 elements of K.
template <typename T>
struct Bit16 {
    enum : int { K_TILE = 64 };
    __device__ __forceinline__ void load_b(void* dst, const TensorMap* map, uint64_t* bar, int kt, int f0) const {
        tma_load_2d(dst, map, bar, f0, kt * K_TILE);
    }
    // B's box: 64 rows of K, 128 bytes (64 features) each, 16 rows a k16 step; A's: K-major, +32 bytes a k16 step.
    template <int TN>
    __device__ __forceinline__ void k_tile(float (&acc)[TN / 2], const unsigned char* b, const unsigned char* a) const {
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < K_TILE / 16; ++ks)
            wgmma_swapped<TN, T>(acc, swizzled_desc(b + ks * 16 * 128, B_BOX, 1024), swizzled_desc(a + ks * 32, 16, 1024));
        wgmma_commit();
    }
    // B's boxes are 64-column panels, B_BOX bytes apart.
    template <int N>
    __device__ __forceinline__ void rows_k_tile(float (&acc)[N / 2], const unsigned char* a, const unsigned char* b) const {
        wgmma_k_tile<N, K_TILE, T>(acc, a, b, B_BOX);
    }
    // The same from `a`'s and `b`'s descriptors (swizzled_desc, B_BOX between B's panels); MB blocks of 64 rows.
    template <int N, int MB = 1>
    __device__ __forceinline__ void rows_k_tile_desc(float (&acc)[MB * N / 2], uint64_t a, uint64_t b) const {
        wgmma_k_tile_desc<N, K_TILE, T, MB>(acc, a, b);
    }
    template <int R>
    __device__ __forceinline__ void scale(float (&)[R]) const {}
};
}  // namespace operands
