// 00 tf32_bt: the first tensor-core stage, mma.sync through inline PTX.
// 128x128x16 block tile, 256 threads in 2 x 4 warps, each warp 64x32 of C as
// 4 x 4 tiles of mma.m16n8k8 (TF32 in, FP32 accumulate: 64 sums per thread).
// A is copied global -> shared with 16-byte cp.async (no register round trip).
// ldmatrix hands out rows of 16 contiguous bytes, and the B fragment wants
// k-consecutive words of one column of B, so B is loaded with LDG.128 and
// stored transposed, Bs[n][k] (ldmatrix's .trans swaps 16-bit halves, useless
// for 32-bit data). Both fragments then come from ldmatrix (.b16 matrices
// moving 32-bit words): A with .x4 (16 rows x 8 k), B with .x2 (8 columns x 8 k).
//
// TF32 rounding: cvt.rna.tf32.f32 (nearest, ties away) on every A fragment
// register after ldmatrix, and on B once per element before it is stored.
//
// No swizzle yet: both tiles are 16 floats (64 bytes) a row, so the 8 row
// addresses of an ldmatrix phase fall on 2 bank groups (4-way conflicts), and the
// transposing stores of a warp (4 k x 32 n, n stride 64 bytes) hit 4 banks
// (8-way). Single buffer: copy, wait, barrier, compute, barrier.
//
// Any M; N % 4 == 0 and K % 4 == 0 (16-byte chunks). Out-of-range chunks are
// zero-filled (cp.async src-size 0, or zeros stored), C stores are guarded.
#include "tf32_tiles.cuh"

constexpr int BM = 128, BN = 128, BK = 16, THREADS = 256;
constexpr int A_OFF = 0, B_OFF = BM * BK;  // As[m][k] 128 x 16, then Bs[n][k] 128 x 16: 16 KB
constexpr int SMEM_FLOATS = (BM + BN) * BK;

__device__ __forceinline__ int tile_word(int row, int col) { return row * BK + col; }

extern "C" __global__ void __launch_bounds__(THREADS, 2)
tf32_bt(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(128) float smem[SMEM_FLOATS];
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    // Copy roles. A: chunk (row a_r + 64 i, k 4 a_c .. +3), i < 2; a warp copies 8 rows x 64 bytes.
    // B: float4 (k b_k + 8 i, n 4 b_n .. +3), i < 2; a warp loads 4 k rows x 128 contiguous bytes.
    const int a_r = t / 4, a_c = t % 4;
    const int b_n = lane % 8 + 8 * (warp % 4), b_k = lane / 8 + 4 * (warp / 4);
    // The tile's origin (a_tile, b_tile) is block-uniform and moves one tile per k step; a thread adds
    // its 32-bit offset (< 128 K, < 16 N), which keeps 64-bit math off the per-thread path.
    const float* a_tile = A + (size_t)row0 * K;
    const float* b_tile = B + col0;
    const int a_off = a_r * K + 4 * a_c, b_off = b_k * N + 4 * b_n;
    const bool a_row_ok[2] = {row0 + a_r < M, row0 + a_r + 64 < M};
    const bool b_col_ok = col0 + 4 * b_n < N;  // N % 4 == 0: the whole float4 is in range

    // Compute roles: warp (warp_m, warp_n) owns C rows 64 warp_m .. +63, columns 32 warp_n .. +31.
    // ldmatrix row addresses: A .x4, lane -> row lane % 16, k chunk lane / 16 (matrices a0..a3);
    // B .x2, lane -> column lane % 8, k chunk (lane / 8) % 2 (b0, b1).
    const int warp_m = warp / 4, warp_n = warp % 4;
    const unsigned s_base = smem_u32(smem);
    const int a_row = warp_m * 64 + lane % 16, a_chunk = lane / 16;
    const int b_row = warp_n * 32 + lane % 8, b_chunk = (lane / 8) % 2;

    float acc[4][4][4] = {};
    const int KT = (K + BK - 1) / BK;
    for (int kt = 0; kt < KT; ++kt) {
        const int k0 = kt * BK;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const bool ok = a_row_ok[i] && k0 + 4 * a_c < K;
            cp_async_16(&smem[A_OFF + tile_word(a_r + 64 * i, 4 * a_c)], ok ? a_tile + (a_off + 64 * i * K) : A, ok);
        }
        a_tile += BK;
        cp_async_commit();
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const bool ok = b_col_ok && k0 + b_k + 8 * i < K;
            const float4 v = ok ? __ldg(reinterpret_cast<const float4*>(b_tile + (b_off + 8 * i * N))) : make_float4(0.f, 0.f, 0.f, 0.f);
            const float e[4] = {v.x, v.y, v.z, v.w};
            store_tf32_transposed(smem, e, [&](int j) { return B_OFF + tile_word(4 * b_n + j, b_k + 8 * i); });
        }
        b_tile += (size_t)BK * N;
        cp_async_wait<0>();
        __syncthreads();

        // Two k steps of 8; B fragments (ldmatrix.x2) held, A (ldmatrix.x4) fetched per 16 rows.
        unsigned b[4][2], a[4];
        mma_warp_tile_64x32_k16(
            acc, b, a,
            [&](unsigned (&b)[4][2], int ks) {
#pragma unroll
                for (int ni = 0; ni < 4; ++ni)
                    ldmatrix_x2(b[ni], s_base + 4 * (B_OFF + tile_word(b_row + 8 * ni, 8 * ks + 4 * b_chunk)));
            },
            [&](int mi, int ks) { return s_base + 4 * (A_OFF + tile_word(a_row + 16 * mi, 8 * ks + 4 * a_chunk)); });
        __syncthreads();
    }

    store_c_warp_tile_64x32(C, acc, M, N, row0, col0, warp_m, warp_n, lane);
}
