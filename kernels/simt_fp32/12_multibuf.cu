// 12 multibuf: a cp.async multi-buffered SIMT kernel (FFMA only). 128x128x16
// block tile, 256 threads in 8 warps of 32x64 (4 x 2), each thread 8x8 outputs
// as two 4-row groups 16 apart x two 4-column groups 32 apart, so each k costs
// 4 LDS.128 for 64 FFMAs; a quarter warp (8 lanes) reads one A address
// (broadcast) and eight consecutive B chunks (128 bytes), no bank conflicts.
// Shared memory is a 4-stage ring of tiles (tiles kt+1..kt+3 in flight while kt
// is computed), 66,560 bytes: it fits the 99 KB of sm_86/89/120 (one block per
// SM there) and two blocks per SM on sm_80/90, which the <= 128 registers of
// __launch_bounds__(256, 2) also allow. Only there: under that cap NVRTC 13.0
// spilled 16 bytes on sm_86/89 too, where a second block never fits.
//
// A must sit k-major in shared memory (As[k][m]) for LDS.128 along m. We copy
// it there with 4-byte cp.async.ca, transposing element by element (the CUTLASS
// SIMT choice for a row-major A), instead of register-staged LDG.128 + STS
// (costs a staging buffer and 8 STS per tile, and only B stays async) or A
// row-major with LDS.128 along k (an 8x4 A fragment, 32 registers, held over 4
// k-steps). Same LDS.128 count in all three; this one keeps every byte async
// and the fewest registers. A warp copies 4 rows x 8 k (32 contiguous bytes a
// row), and with As rows of 128 + 4 floats its 32 shared stores hit 32 banks.
//
// Fragments are double-buffered in registers; the barrier of each tile sits
// after step BK-2 (the last LDS of the tile is issued by then), so the first
// fragment of tile kt+1 loads during step BK-1. cp.async group g always holds
// tile g (empty past the end), which makes every wait count a constant.
// Out-of-range elements/chunks are zero-filled (src-size 0); stores are
// guarded. Needs sm_80+, N % 4 == 0 (B chunks, float4 stores) and K % 4 == 0.
#include "ptx.cuh"
#include "supertile.cuh"

constexpr int BM = 128, BN = 128, BK = 16, THREADS = 256, STAGES = 4;
constexpr int LDA = BM + 4;                         // As[k][m] row: 132 floats, 528 bytes (16-byte multiple)
constexpr int A_FLOATS = BK * LDA;                  // 2,112
constexpr int STAGE_FLOATS = A_FLOATS + BK * BN;    // 4,160 floats = 16,640 bytes per stage
enum : int { SMEM_BYTES = STAGES * STAGE_FLOATS * 4 };  // 66,560, dynamic
static_assert(BK % 2 == 0 && (A_FLOATS * 4) % 16 == 0 && (STAGE_FLOATS * 4) % 16 == 0, "16-byte aligned chunks");

// 4-byte copy global -> shared, zero-filled when !in_range (src must still be valid).
__device__ __forceinline__ void cp_async_4(float* smem_dst, const float* gmem_src, bool in_range) {
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem_dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(in_range ? 4 : 0) : "memory");
}

enum : int { MIN_BLOCKS = __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 ? 2 : 1 };  // blocks an SM's smem holds

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_multibuf(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(16) float smem[];
    const int t = threadIdx.x;
    int tile_row, tile_col;
    supertile_4x4(tile_row, tile_col);
    const int row0 = tile_row * BM, col0 = tile_col * BN;

    // Copy roles. A: element (m = a_m + 32i, k = a_k + 8h), i < 4, h < 2; a warp covers 4 m x 8 k.
    // B: 16-byte chunk (k = b_k + 8l, n = b_n .. b_n+3), l < 2; a warp covers one 512-byte row.
    // Addresses are a block-uniform pointer plus a per-thread 32-bit offset (so K, N < 2^26).
    const int a_k = t % 8, a_m = t / 8, b_k = t / 32, b_n = 4 * (t % 32);
    const int a_off = a_m * K + a_k, b_off = b_k * N + b_n;
    const float* a_blk = A + (size_t)row0 * K;
    const float* b_blk = B + col0;
    const bool full_mn = row0 + BM <= M && col0 + BN <= N;  // block-uniform
    const bool b_col_ok = col0 + b_n < N;                   // N % 4 == 0: the whole chunk is in range
    unsigned a_row_ok = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) a_row_ok |= (row0 + a_m + 32 * i < M ? 1u : 0u) << i;

    auto load_tile = [&](int kt, int stage) {
        float* a_dst = smem + stage * STAGE_FLOATS + a_k * LDA + a_m;
        float* b_dst = smem + stage * STAGE_FLOATS + A_FLOATS + b_k * BN + b_n;
        const int k0 = kt * BK;
        if (full_mn && k0 + BK <= K) {  // interior tile: no guards
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    cp_async_4(a_dst + 8 * h * LDA + 32 * i, (a_blk + ((size_t)(32 * i) * K + k0)) + (a_off + 8 * h), true);
#pragma unroll
            for (int l = 0; l < 2; ++l)
                cp_async_16(b_dst + 8 * l * BN, (b_blk + (size_t)(k0 + 8 * l) * N) + b_off, true);
        } else {  // edge tile: out-of-range elements and chunks are zero-filled from a valid dummy address
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const bool k_ok = k0 + a_k + 8 * h < K;
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const bool ok = k_ok && (a_row_ok >> i & 1u);
                    cp_async_4(a_dst + 8 * h * LDA + 32 * i,
                               ok ? (a_blk + ((size_t)(32 * i) * K + k0)) + (a_off + 8 * h) : A, ok);
                }
            }
#pragma unroll
            for (int l = 0; l < 2; ++l) {
                const bool ok = b_col_ok && k0 + b_k + 8 * l < K;
                cp_async_16(b_dst + 8 * l * BN, ok ? (b_blk + (size_t)(k0 + 8 * l) * N) + b_off : B, ok);
            }
        }
    };

    // Compute roles: warp (warp / 2, warp % 2) owns C rows 32*(warp/2) .. +31, columns 64*(warp%2) .. +63;
    // lane (wy, wx) = (lane / 8, lane % 8) owns rows m_off + {0..3, 16..19}, columns n_off + {0..3, 32..35}.
    const int warp = t / 32, lane = t % 32;
    const int m_off = (warp / 2) * 32 + (lane / 8) * 4;
    const int n_off = (warp % 2) * 64 + (lane % 8) * 4;
    float4 fa[2][2], fb[2][2];  // [register buffer][low/high group]
    auto load_frag = [&](int buf, const float* stage_ptr, int k) {
        const float* as = stage_ptr + k * LDA + m_off;
        const float* bs = stage_ptr + A_FLOATS + k * BN + n_off;
        fa[buf][0] = *reinterpret_cast<const float4*>(as);
        fa[buf][1] = *reinterpret_cast<const float4*>(as + 16);
        fb[buf][0] = *reinterpret_cast<const float4*>(bs);
        fb[buf][1] = *reinterpret_cast<const float4*>(bs + 32);
    };
    float acc[8][8] = {};
    auto outer_product = [&](int buf) {
        const float a[8] = {fa[buf][0].x, fa[buf][0].y, fa[buf][0].z, fa[buf][0].w,
                            fa[buf][1].x, fa[buf][1].y, fa[buf][1].z, fa[buf][1].w};
        const float b[8] = {fb[buf][0].x, fb[buf][0].y, fb[buf][0].z, fb[buf][0].w,
                            fb[buf][1].x, fb[buf][1].y, fb[buf][1].z, fb[buf][1].w};
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    };

    const int KT = (K + BK - 1) / BK;
    // Prologue: tiles 0 .. STAGES-1 fill the whole ring (nothing is being read yet).
#pragma unroll 1
    for (int s = 0; s < STAGES; ++s) {
        if (s < KT) load_tile(s, s);
        cp_async_commit();
    }
    cp_async_wait<STAGES - 1>();  // group 0 = tile 0 has landed (this thread's part)
    __syncthreads();              // ... and every thread's part
    load_frag(0, smem, 0);

    int stage = 0;
    for (int kt = 0; kt < KT; ++kt) {
        const float* cur = smem + stage * STAGE_FLOATS;
        const int next = stage + 1 == STAGES ? 0 : stage + 1;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            // Step k's fragment is in registers (buffer k & 1); fetch step k+1's, which for the
            // last step is tile kt+1's first, made visible by the barrier after step BK-2.
            if (k + 1 < BK) load_frag((k + 1) & 1, cur, k + 1);
            else load_frag(0, smem + (kt + 1 < KT ? next : stage) * STAGE_FLOATS, 0);  // last tile: a dummy re-read
            outer_product(k & 1);
            if (k == BK - 2) {
                // Committed so far: groups 0 .. STAGES-1+kt; waiting down to STAGES-2 pending
                // completes group kt+1 = tile kt+1. Past the barrier every thread has issued
                // all its reads of tile kt, so its buffer takes tile kt+STAGES.
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                if (kt + STAGES < KT) load_tile(kt + STAGES, stage);
                cp_async_commit();
            }
        }
        stage = next;
    }

    const int r0 = row0 + m_off, c0 = col0 + n_off;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int r = r0 + (i < 4 ? i : 12 + i);  // rows m_off + 0..3 and m_off + 16..19
        if (r < M) {
#pragma unroll
            for (int g = 0; g < 2; ++g) {
                const int c = c0 + 32 * g;
                if (c < N)
                    *reinterpret_cast<float4*>(&C[(size_t)r * N + c]) =
                        make_float4(acc[i][4 * g], acc[i][4 * g + 1], acc[i][4 * g + 2], acc[i][4 * g + 3]);
            }
        }
    }
}
