// Building blocks of the SIMT FP32 ladders (kernels/simt_fp32, and walk C's
// kernels/simt_fp32_c for outer_product_fma): tile
// loaders into shared memory, one k step of the register outer product, and the
// C stores. Matrices are row-major, A is M x K, B is K x N. A thread's part of a
// tile is given by its coordinates (ty, tx) and template steps between its rows
// (RS) and columns (CX, CS); row0 / col0 / k0 are the tile's origin.
//
// Each piece leaves the stages' machine code exactly as it was with the code
// written inline (CUBIN hashes, sm_80 .. sm_120). That is why the helpers take
// the same leaf values the inline code used (row0 and ty, not row0 + ty) and
// write the same expressions, and why register fragments (a, b) are declared
// by the caller next to acc. Still written inline in the stages, because every
// helper form tried changed the sm_120 CUBIN: the B-tile loaders (NVVM then
// hoists their column guard out of the k loop), 11's A loader and the body of
// 14_geometry.
#pragma once

// Footprint loader: each thread stages in As and Bs exactly the TI x TJ elements
// it later reads (rows ty + RS*i, columns CX*tx + CS*j), zero past the matrix.
template <int TI, int TJ, int RS, int CX, int CS, class SA, class SB>
__device__ __forceinline__ void load_ab_footprint(SA& As, SB& Bs, const float* A, const float* B, int M, int N, int K,
                                                  int row0, int col0, int k0, int ty, int tx) {
#pragma unroll
    for (int i = 0; i < TI; ++i)
#pragma unroll
        for (int j = 0; j < TJ; ++j) {
            const int r = ty + RS * i, c = CX * tx + CS * j;
            As[r][c] = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : 0.0f;
            Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(size_t)(k0 + r) * N + col0 + c] : 0.0f;
        }
}

// Row-sweep loader of the BM x BK tile of A at (row0, k0), one float per thread
// per pass: a warp reads 32 consecutive floats of a row (whole 32-byte sectors).
template <int BM, int BK, int THREADS, class SA>
__device__ __forceinline__ void load_a_rows(SA& As, const float* A, int M, int K, int row0, int k0, int t) {
    static_assert(THREADS % BK == 0 && BM * BK % THREADS == 0, "whole rows per pass, whole passes per tile");
#pragma unroll
    for (int l = 0; l < BM * BK / THREADS; ++l) {
        const int r = t / BK + THREADS / BK * l, c = t % BK;
        As[r][c] = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : 0.0f;
    }
}

// float4 loader of the BM x BK tile of A at (row0, k0) into a padded As (rows of
// BK + 1 floats, not 16-byte aligned): one LDG.128 per 4-float chunk along K,
// spread over 4 scalar STS. Chunk t + THREADS*l runs row-major over the tile.
// Columns from k_end on read as zero (k_end = K, or a split-K slice end); needs
// K % 4 == 0 so a chunk is aligned and wholly inside or outside.
template <int BM, int BK, int THREADS, class SA>
__device__ __forceinline__ void load_a_f4_spread(SA& As, const float* A, int M, int K, int k_end, int row0, int k0, int t) {
    static_assert(BK % 4 == 0 && BM * BK / 4 % THREADS == 0, "whole chunks, whole passes per tile");
#pragma unroll
    for (int l = 0; l < BM * BK / 4 / THREADS; ++l) {
        const int id = t + THREADS * l, r = id / (BK / 4), c = id % (BK / 4) * 4;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (row0 + r < M && k0 + c < k_end) v = *reinterpret_cast<const float4*>(&A[(size_t)(row0 + r) * K + k0 + c]);
        As[r][c] = v.x; As[r][c + 1] = v.y; As[r][c + 2] = v.z; As[r][c + 3] = v.w;
    }
}

// One k step of a 2x2 outer product: As rows r0 and r0 + RS times Bs columns c0
// and c0 + CS, so each of the 4 shared loads feeds two FMAs.
template <int RS, int CS, class SA, class SB>
__device__ __forceinline__ void outer_product_2x2(float (&acc)[2][2], const SA& As, const SB& Bs, int k, int r0, int c0) {
    const float a0 = As[r0][k], a1 = As[r0 + RS][k];
    const float b0 = Bs[k][c0], b1 = Bs[k][c0 + CS];
    acc[0][0] += a0 * b0; acc[0][1] += a0 * b1;
    acc[1][0] += a1 * b0; acc[1][1] += a1 * b1;
}

// acc += a b^T: TM*TN FMAs from TM + TN registers, the reuse register blocking buys.
template <int TM, int TN>
__device__ __forceinline__ void outer_product_fma(float (&acc)[TM][TN], const float (&a)[TM], const float (&b)[TN]) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
}

// One k step of the register-blocked outer product: TM values of As column k
// (rows r0 + RS*i) into a, TN values of Bs row k (columns c0 + CS*j) into b,
// then their outer product into acc.
template <int RS, int CS, int TM, int TN, class SA, class SB>
__device__ __forceinline__ void outer_product_step(float (&acc)[TM][TN], float (&a)[TM], float (&b)[TN], const SA& As, const SB& Bs,
                                                   int k, int r0, int c0) {
#pragma unroll
    for (int i = 0; i < TM; ++i) a[i] = As[r0 + RS * i][k];
#pragma unroll
    for (int j = 0; j < TN; ++j) b[j] = Bs[k][c0 + CS * j];
    outer_product_fma(acc, a, b);
}

// One k step with the thread's 4 adjacent B columns (c0 .. c0+3) read into b as
// one LDS.128, and each A value (rows r0 + RS*i) used for 4 FMAs once loaded.
template <int RS, int TM, class SA, class SB>
__device__ __forceinline__ void outer_product_step_b4(float (&acc)[TM][4], float4& b, const SA& As, const SB& Bs, int k, int r0, int c0) {
    b = *reinterpret_cast<const float4*>(&Bs[k][c0]);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const float a = As[r0 + RS * i][k];
        acc[i][0] += a * b.x; acc[i][1] += a * b.y; acc[i][2] += a * b.z; acc[i][3] += a * b.w;
    }
}

// Guarded scalar store of the thread's TM x TN outputs: rows row0 + ty + RS*i,
// columns col0 + CX*tx + CS*j.
template <int RS, int CX, int CS, int TM, int TN>
__device__ __forceinline__ void store_tile(float* C, const float (&acc)[TM][TN], int M, int N, int row0, int ty, int col0, int tx) {
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int r = row0 + ty + RS * i, c = col0 + CX * tx + CS * j;
            if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
        }
}

// float4 store: the 4 adjacent outputs of each of the thread's rows
// (row0 + ty + RS*i, columns c .. c+3) leave as one STG.128, filling whole
// 32-byte sectors. Needs N % 4 == 0 and c % 4 == 0: a group is wholly in or out.
template <int RS, int TM>
__device__ __forceinline__ void store_tile_f4(float* C, const float (&acc)[TM][4], int M, int N, int row0, int ty, int c) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + ty + RS * i;
        if (r < M && c < N)
            *reinterpret_cast<float4*>(&C[(size_t)r * N + c]) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    }
}
