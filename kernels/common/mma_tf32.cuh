// Tensor-core helpers for the TF32 family as inline PTX (sm_80+): the shared
// address of a pointer, ldmatrix, the FP32 -> TF32 rounding and the m16n8k8 mma.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k8", .tf32), with
// g = lane / 4 and t = lane % 4:
//   A (16x8, row)  a = {A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]}
//   B (8x8, col)   b = {B[t][g], B[t+4][g]}                      (B[k][n])
//   C/D (16x8)     d = {D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1]}
// ldmatrix .m8n8.b16 moves 8 rows of 16 bytes per matrix. Read as 32-bit data a
// matrix is an 8x4 tile of words, and lane l receives word l % 4 of row l / 4,
// i.e. element [g][t]: exactly one register of the A or B fragment above. Lanes
// 8j .. 8j+7 supply the row addresses of matrix j (.x2 uses lanes 0..15 only).
// .trans would swap 16-bit halves, so it is of no use for 32-bit data.
#pragma once

// The .shared address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// volatile: the same address returns new data after each barrier, so these must
// never be merged or hoisted out of the k loop.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x2(unsigned (&r)[2], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}

// FP32 -> TF32 (10-bit mantissa), round to nearest, ties away from zero. Without
// it the tensor core ignores the 13 low mantissa bits, i.e. truncates, which
// pulls every product toward zero. ptxas emits three ALU instructions for it
// (an Inf/NaN test, +0x1000, a mask).
__device__ __forceinline__ unsigned to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// d += A * B for one 16x8x8 tile, FP32 accumulate (layouts above).
__device__ __forceinline__ void mma_tf32_16x8x8(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
