// Walk C warptile (SIMT, FP32 arithmetic), written once over the input type T
// (float, __half, __nv_bfloat16) and the tile (BM x BN x BK block, WM x WN per
// warp, STAGES shared-memory buffers: 1 = load then compute, 2 = the next tile's
// global loads are issued before the current tile is computed and stored into
// the other buffer after it, one barrier per tile). Used by c_warptile
// (simt_fp32_c/06), the half-precision port (half_c/00) and their tuning stages.
//
// Hierarchy: block -> warps (WM x WN) -> 16 x 32 warp sub-tiles -> 4 x 4 per lane.
// Lanes sit 4 (rows) x 8 (columns) in a sub-tile, so per k a lane reads WM/16
// A float4s and WN/32 B float4s (LDS.128) for WM*WN/32 FFMAs; a warp's B reads
// are 8 consecutive 16-byte chunks (one 128-byte wavefront) and its A reads 4.
//
// Shared memory, FP32 whatever T is (widened on the way in, so the inner loop is
// the FP32 one): As[k][m] (A transposed, rows of BM + 4 floats) then Bs[k][n].
// A is copied in 16-byte chunks along k (Chunk<T>::VEC elements) and scattered
// into As one float at a time. For floats a warp copies 16 rows x 2 chunks (one
// full 32-byte sector per row); the two chunk columns are 4 rows of As apart,
// 4 * (BM + 4) = 16 banks (mod 32), so the 32 stores hit 32 banks. For 16-bit
// inputs a warp copies 32 rows x 1 chunk (32 consecutive banks).
//
// Edges: chunks outside A or B are zero-filled and C stores are guarded, so any
// M works; chunks are all in or all out when N and K are multiples of VEC (the
// 16-byte alignment every LDG.128 needs), which is the stages' ShapeRule.
#pragma once
#include "walkc_chunk.cuh"

template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES>
struct Warptile {
    using Ch = Chunk<T>;
    static constexpr int VEC = Ch::VEC;
    static constexpr int WARPS_N = BN / WN, WARPS = (BM / WM) * WARPS_N, THREADS = 32 * WARPS;
    static constexpr int LDA = BM + 4;
    static constexpr int A_FLOATS = BK * LDA, STAGE_FLOATS = A_FLOATS + BK * BN;
    static constexpr int SMEM_BYTES = STAGES * STAGE_FLOATS * 4;
    static constexpr int A_PER = BM * BK / VEC / THREADS, B_PER = BK * BN / VEC / THREADS;  // chunks per thread
    static constexpr int R = VEC == 4 ? 16 : 32, G = 32 / R;  // a warp's A copy: R rows x G chunks
    static constexpr int KB = BK / VEC / G;                    // warp copy units along k
    static constexpr int WMI = WM / 16, WNI = WN / 32;          // sub-tiles per warp
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 32 == 0, "warp tile: 16 x 32 sub-tiles");
    static_assert(THREADS <= 1024 && (STAGES == 1 || STAGES == 2), "threads, stages");
    static_assert(BM % R == 0 && (BK / VEC) % G == 0 && BK % VEC == 0 && BN % VEC == 0, "copy units");
    static_assert(A_PER * THREADS * VEC == BM * BK && B_PER * THREADS * VEC == BK * BN, "whole chunks per thread");
};

template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES>
__device__ __forceinline__ void warptile_gemm(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C,
                                              int M, int N, int K, float* smem) {
    using W = Warptile<T, BM, BN, BK, WM, WN, STAGES>;
    using Ch = typename W::Ch;
    constexpr int VEC = W::VEC, THREADS = W::THREADS, LDA = W::LDA, R = W::R, G = W::G, KB = W::KB;
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    typename Ch::Raw ra[W::A_PER], rb[W::B_PER];
    // A chunk l of this thread: warp unit u = id / 32 (KB units per R-row band), lane -> (row, chunk).
    auto a_row = [&](int l) { return ((warp + W::WARPS * l) / KB) * R + lane % R; };
    auto a_k = [&](int l) { return (((warp + W::WARPS * l) % KB) * G + lane / R) * VEC; };
    auto b_row = [&](int l) { return (t + THREADS * l) / (BN / VEC); };
    auto b_col = [&](int l) { return (t + THREADS * l) % (BN / VEC) * VEC; };
    auto load = [&](int k0) {
#pragma unroll
        for (int l = 0; l < W::A_PER; ++l) {
            const int r = row0 + a_row(l), k = k0 + a_k(l);
            ra[l] = (r < M && k < K) ? Ch::load(A + (size_t)r * K + k) : Ch::zero();
        }
#pragma unroll
        for (int l = 0; l < W::B_PER; ++l) {
            const int k = k0 + b_row(l), c = col0 + b_col(l);
            rb[l] = (k < K && c < N) ? Ch::load(B + (size_t)k * N + c) : Ch::zero();
        }
    };
    auto store = [&](float* s) {
#pragma unroll
        for (int l = 0; l < W::A_PER; ++l) {
            float f[VEC];
            Ch::widen(ra[l], f);
#pragma unroll
            for (int q = 0; q < VEC; ++q) s[(a_k(l) + q) * LDA + a_row(l)] = f[q];
        }
#pragma unroll
        for (int l = 0; l < W::B_PER; ++l) {
            float f[VEC];
            Ch::widen(rb[l], f);
#pragma unroll
            for (int q = 0; q < VEC; q += 4)
                *reinterpret_cast<float4*>(&s[W::A_FLOATS + b_row(l) * BN + b_col(l) + q]) = make_float4(f[q], f[q + 1], f[q + 2], f[q + 3]);
        }
    };

    // Compute roles: warp (wr, wc) of the (BM/WM) x (BN/WN) grid; lane (ly, lx) = (lane / 8, lane % 8)
    // owns rows a_off + 16i + {0..3} and columns b_off + 32j + {0..3} of the block tile.
    const int a_off = (warp / W::WARPS_N) * WM + 4 * (lane / 8);
    const int b_off = (warp % W::WARPS_N) * WN + 4 * (lane % 8);
    float acc[4 * W::WMI][4 * W::WNI] = {};
    auto compute = [&](const float* s) {
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[4 * W::WMI], b[4 * W::WNI];
#pragma unroll
            for (int i = 0; i < W::WMI; ++i) {
                const float4 v = *reinterpret_cast<const float4*>(&s[k * LDA + a_off + 16 * i]);
                a[4 * i] = v.x; a[4 * i + 1] = v.y; a[4 * i + 2] = v.z; a[4 * i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < W::WNI; ++j) {
                const float4 v = *reinterpret_cast<const float4*>(&s[W::A_FLOATS + k * BN + b_off + 32 * j]);
                b[4 * j] = v.x; b[4 * j + 1] = v.y; b[4 * j + 2] = v.z; b[4 * j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < 4 * W::WMI; ++i)
#pragma unroll
                for (int j = 0; j < 4 * W::WNI; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
    };

    const int KT = (K + BK - 1) / BK;
    if constexpr (STAGES == 1) {
        for (int kt = 0; kt < KT; ++kt) {
            load(kt * BK);
            store(smem);
            __syncthreads();
            compute(smem);
            __syncthreads();  // everyone is done reading before the next tile overwrites it
        }
    } else {
        load(0);
        store(smem);
        __syncthreads();
        for (int kt = 0; kt < KT; ++kt) {
            // Buffer (kt+1)&1 was last read in iteration kt-1, which ended with a barrier.
            if (kt + 1 < KT) load((kt + 1) * BK);  // in flight while tile kt is computed
            compute(smem + (kt & 1) * W::STAGE_FLOATS);
            if (kt + 1 < KT) store(smem + ((kt + 1) & 1) * W::STAGE_FLOATS);
            __syncthreads();
        }
    }

#pragma unroll
    for (int i = 0; i < 4 * W::WMI; ++i) {
        const int r = row0 + a_off + 16 * (i / 4) + i % 4;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < W::WNI; ++j) {
            const int c = col0 + b_off + 32 * j;
            if (c < N)
                *reinterpret_cast<float4*>(&C[(size_t)r * N + c]) =
                    make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
        }
    }
}
