// Walk D's TF32 ladder (kernels/hopper_tf32), sm_90a: wgmma with TF32 operands, which must both be
// K-major in shared memory (PTX allows no transpose for 32-bit types), for row-major A (M x K, K-major)
// and B (K x N, N-major). The stages compute the transposed product C^T = B^T A^T instead:
//   wgmma's M side  = B^T (N x K): taken from registers (the RS form), loaded from B's N-major tile with
//                     ordinary 32-bit shared loads, so no layout constraint applies to it;
//   wgmma's N side  = A^T (K x M): K-major as A already is, read from shared memory by descriptor;
//   accumulators    = C^T: row R of a warpgroup's 64 x N product is a column of C, column j a row of C.
// No transpose pass and no workspace: B crosses shared memory once, as TMA put it there.
//
//   KBOX, PANEL_BYTES     a k tile's depth (32 FP32 = one 128-byte swizzle row) and one 32 x 32 B box
//   wgmma_tf32<N>         wgmma.mma_async m64nNk8 .tf32, fragments of B^T in registers, A^T by descriptor
//   bt_column             which column of B (within the warpgroup's 64) fragment row R holds
//   bt_offset             byte offset of B(k, n) in a stage's B tile (32-column panels, 128-byte swizzled)
//   tma_load_stage        one stage's TMA boxes: A (the map's tile_m rows x 32 k), B (32 k x BN, BN/32 panels)
//   rna_tf32              FP32 -> TF32 bits, round to nearest (walk B's to_tf32, whose header cannot sit beside hopper.cuh)
//   wgmma_tf32_k_tile     one 32-deep k tile of a warpgroup's product: fragments loaded, 4 wgmmas, one group
//   store_acc_t           a warpgroup's accumulators (C^T) to row-major C, guarded at the edges
//
// Rounding: A goes to the tensor cores as TMA wrote it, FP32 bits that they read as TF32 (the low 13
// mantissa bits ignored: truncation); B's fragments pass through registers, so they are rounded to
// nearest on the way (cvt.rna, as walk B and cuBLAS do), which halves the variance of the difference
// from cuBLAS (tolerance.py works it out: measured max scaled error 0.60-0.65 with both truncated).
#pragma once
#include "hopper.cuh"

namespace tf32h {
constexpr int KBOX = 32;                    // FP32 elements in one 128-byte swizzle row
constexpr int PANEL_BYTES = KBOX * KBOX * 4;  // a 32 (k) x 32 (n) box of B: 4 KB, 1 KB aligned in every stage
}  // namespace tf32h

// d (64 x N, FP32) += Bt (64 x 8, registers) . At (8 x N, K-major, 128-byte swizzle). Fragment register i of
// a thread holds row (warp % 4) * 16 + lane / 4 + 8 (i % 2), column lane % 4 + 4 (i / 2) of the 64 x 8 operand
// (CUTLASS's ALayout_64x8); d as in hopper.cuh's wgmma.
template <int N>
__device__ __forceinline__ void wgmma_tf32(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b);

template <>
__device__ __forceinline__ void wgmma_tf32<128>(float (&d)[64], const uint32_t (&a)[4], uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_tf32<256>(float (&d)[128], const uint32_t (&a)[4], uint64_t b) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1));
}

// Fragment row warp * 16 + g + 8h (g = lane / 4) of a warpgroup's 64 -> the column of B (0..63) it holds.
// Any one-to-one map is correct if loads and stores share it; this one makes the fragment loads free of
// bank conflicts: at one k, a warp's 8 rows g read 4 columns in one 16-byte chunk and 4 in the chunk 4
// further on, which the swizzle (chunk ^ k % 8, k over 4 values) sends to 8 different chunks.
__device__ __forceinline__ int bt_column(int warp, int g, int h) {
    return (warp / 2) * 32 + (warp % 2) * 8 + 4 * h + (g % 4) + 16 * (g / 4);
}

// B(k, n) in a stage's B tile: panels of 32 columns, PANEL_BYTES apart, each 32 rows of 128 bytes with
// the 16-byte chunk c of row k at chunk c ^ (k % 8) (TMA's CU_TENSOR_MAP_SWIZZLE_128B).
__device__ __forceinline__ uint32_t bt_offset(int k, int n) {
    return (n / 32) * tf32h::PANEL_BYTES + k * 128 + ((((n % 32) / 4) ^ (k % 8)) * 16) + (n % 4) * 4;
}

__device__ __forceinline__ uint32_t rna_tf32(float x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// One stage: A rows m0.. (one box: the map's rows x 32 k) at `st`, then B's 32 k rows x BN columns as
// BN / 32 panels after A's a_bytes. The caller has armed `bar` with the stage's bytes.
template <int BN>
__device__ __forceinline__ void tma_load_stage(unsigned char* st, uint32_t a_bytes, const TensorMap& tma_a, const TensorMap& tma_b,
                                               uint64_t* bar, int m0, int n0, int k0) {
    tma_load_2d(st, &tma_a, bar, k0, m0);
#pragma unroll
    for (int p = 0; p < BN / tf32h::KBOX; ++p) tma_load_2d(st + a_bytes + p * tf32h::PANEL_BYTES, &tma_b, bar, n0 + p * tf32h::KBOX, k0);
}

// One 32-deep k tile of a warpgroup's product, issued and committed as one wgmma group: the fragments of B's
// columns n_base.. (64 of them) for all four k8 steps, rounded to TF32, then four wgmmas against the stage's A tile (N rows of
// 128 bytes: +32 bytes per k8 step, 8-row atoms 1 KB apart). The fragments are read before the fence, so the
// next call may overwrite them once this group is waited for.
template <int N>
__device__ __forceinline__ void wgmma_tf32_k_tile(float (&acc)[N / 2], const unsigned char* a_tile, const unsigned char* b_tile, int n_base) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    uint32_t f[tf32h::KBOX / 8][4];
#pragma unroll
    for (int ks = 0; ks < tf32h::KBOX / 8; ++ks)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            f[ks][i] = rna_tf32(*reinterpret_cast<const float*>(b_tile + bt_offset(ks * 8 + t + 4 * (i / 2), n_base + bt_column(warp, g, i % 2))));
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < tf32h::KBOX / 8; ++ks) wgmma_tf32<N>(acc, f[ks], swizzled_desc(a_tile + ks * 32, 16, 1024));
    wgmma_commit();
}

// A warpgroup's accumulators are C^T: d[4j + 2h + c] is column n0 + bt_column(warp, lane / 4, h) of C, row
// m0 + 8j + 2 (lane % 4) + c. Scalar stores (a thread's neighbours in C belong to other lanes); ldc = N.
template <int N>
__device__ __forceinline__ void store_acc_t(const float (&d)[N / 2], float* C, int M, int ldc, int m0, int n0) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int col = n0 + bt_column(warp, lane / 4, h);
        if (col >= ldc) continue;
#pragma unroll
        for (int j = 0; j < N / 8; ++j)
#pragma unroll
            for (int c = 0; c < 2; ++c) {
                const int row = m0 + j * 8 + 2 * (lane % 4) + c;
                if (row < M) C[(size_t)row * ldc + col] = d[4 * j + 2 * h + c];
            }
    }
}
