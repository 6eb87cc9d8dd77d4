// Hopper FP8 pieces (kernels/hopper_fp8), sm_90a, on walk D's hopper.cuh:
//   wgmma_fp8<N>         m64nNk32, E4M3 A, E4M3 or E5M2 B, FP32 accumulators (N 16, 64: 06's tokens; 128, 256)
//   wgmma_fp8_k_tile     one 128-byte-deep k tile of a warpgroup's 64 x N product, one wgmma group
//
// FP8 wgmma has no transpose: both operands are K-major, so the FP8 class stores B as N x K (farm/measure/checks.py).
// Shared-memory tiles are rows of 128 bytes (128 FP8 k) in TMA's 128-byte swizzle, 8-row atoms of 1 KB: walk D's A
// layout, so the same descriptors serve (k32 of FP8 is 32 bytes, as k16 of 16 bits).
//
// Accumulation: FP8 wgmma's FP32 accumulators keep about 13 mantissa bits of each instruction's sum
// (farm/measure/tolerance.py); partial sums promoted to FP32 registers do better.
#pragma once
#include "hopper.cuh"

// wgmma's type pair: A is E4M3; B is E4M3 (fp8_e4m3), or E5M2 where the compile defines FP8_B_E5M2 (fp8_e4m3_e5m2,
// kernels/hopper_fp8/stages.py): a define, so E4M3 stages compile to the same CUBIN, symbol names included.
#ifdef FP8_B_E5M2
#define FP8_B_TYPE "e5m2"
#else
#define FP8_B_TYPE "e4m3"
#endif
#define FP8_TYPES_AB "e4m3." FP8_B_TYPE  // wgmma's A: the product's A
#define FP8_TYPES_BA FP8_B_TYPE ".e4m3"  // ... its B (06/07's C^T = B^T A^T)

// Per N: wgmma's operand registers (d[0..N/2), a, b) and its scale-d predicate.
#define FP8_REGS_16 "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9"
#define FP8_ACC_16 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define FP8_PRED_16 "%10"
#define FP8_REGS_64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33"
#define FP8_ACC_64 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define FP8_PRED_64 "%34"
#define FP8_REGS_128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65"
#define FP8_ACC_128 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define FP8_PRED_128 "%66"
#define FP8_REGS_256 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129"
#define FP8_ACC_256 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define FP8_PRED_256 "%130"
#define WGMMA_FP8(TYPES, N)                                                                                          \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " FP8_PRED_##N ", 0;\n"                                       \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32." TYPES " " FP8_REGS_##N ", p, 1, 1;\n}\n"      \
                 : FP8_ACC_##N                                                                                       \
                 : "l"(a), "l"(b), "r"(1))

// d (64 x N, FP32) += A (64 x 32, K-major) . B (N x 32, K-major)^T, d as wgmma<N, T> lays it out. B_FIRST: `a` holds
// the product's B (E5M2 in fp8_e4m3_e5m2), `b` its A: the type pair B's, then A's.
template <int N, bool B_FIRST = false>
__device__ __forceinline__ void wgmma_fp8(float (&d)[N / 2], uint64_t a, uint64_t b) {
    static_assert(N == 16 || N == 64 || N == 128 || N == 256, "wgmma_fp8: N is 16, 64, 128 or 256");
    if constexpr (N == 16) {
        if constexpr (B_FIRST) WGMMA_FP8(FP8_TYPES_BA, 16); else WGMMA_FP8(FP8_TYPES_AB, 16);
    } else if constexpr (N == 64) {
        if constexpr (B_FIRST) WGMMA_FP8(FP8_TYPES_BA, 64); else WGMMA_FP8(FP8_TYPES_AB, 64);
    } else if constexpr (N == 128) {
        if constexpr (B_FIRST) WGMMA_FP8(FP8_TYPES_BA, 128); else WGMMA_FP8(FP8_TYPES_AB, 128);
    } else {
        if constexpr (B_FIRST) WGMMA_FP8(FP8_TYPES_BA, 256); else WGMMA_FP8(FP8_TYPES_AB, 256);
    }
}

// One BK-byte-deep k tile of a warpgroup's 64 x N product as one wgmma group: `a` its 64 rows of A, `b` the stage's N
// rows of B, swizzled K-major rows (+32 bytes a k32). B_FIRST: `a` holds the product's B, `b` its A (wgmma_fp8).
template <int N, int BK, bool B_FIRST = false>
__device__ __forceinline__ void wgmma_fp8_k_tile(float (&acc)[N / 2], const unsigned char* a, const unsigned char* b) {
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 32; ++ks)
        wgmma_fp8<N, B_FIRST>(acc, swizzled_desc(a + ks * 32, 16, 1024), swizzled_desc(b + ks * 32, 16, 1024));
    wgmma_commit();
}

// A warpgroup's accumulators times both per-tensor scales.
template <int R>
__device__ __forceinline__ void dequantise(float (&acc)[R], const float* scale_a, const float* scale_b) {
    const float s = *scale_a * *scale_b;
#pragma unroll
    for (int i = 0; i < R; ++i) acc[i] *= s;
}
