// 00 mma_sync: walk D's starting point, the best pre-Hopper tensor-core path tuned for
// the H100. 128x128x64 block tile, 8 warps of 64x32, mma.sync m16n8k16 (FP32
// accumulate) fed by ldmatrix (A) and ldmatrix.trans (B is K x N, N contiguous). Tiles
// travel global -> shared by cp.async, 3 stages deep, into the 128-byte-swizzled layout
// of common/hopper.cuh (A rows of 64 k; B rows of 128 n, swizzled within each 8-chunk
// group), so each ldmatrix phase's 8 rows hit 8 different bank groups without padding.
// Why it should help over walk C's WMMA: no padding, no fragment reloads through
// WMMA's opaque layout, 4x more MMA work per barrier. N % 8 == 0, K % 8 == 0, any M.
#include "ptx.cuh"
#include "hopper.cuh"

namespace d00 {
constexpr int BM = 128, BN = 128, BK = 64, STAGES = 3, THREADS = 256;
constexpr int A_BYTES = BM * BK * 2, STAGE_BYTES = A_BYTES + BK * BN * 2;
enum : int { SMEM_BYTES = STAGES * STAGE_BYTES };  // dynamic

__device__ __forceinline__ uint32_t a_off(int r, int chunk) { return r * 128 + ((chunk ^ (r & 7)) << 4); }
__device__ __forceinline__ uint32_t b_off(int k, int chunk) { return A_BYTES + k * 256 + ((chunk ^ (k & 7)) << 4); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

template <typename T>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma16816<__half>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
}  // namespace d00

template <typename T>
__global__ void __launch_bounds__(d00::THREADS, 1)
d_mma_sync(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using namespace d00;
    extern __shared__ __align__(1024) unsigned char smem[];
    const uint32_t base = smem_u32(smem);
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wr = warp / 4, wc = warp % 4;  // 2 x 4 warps of 64 x 32
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    auto issue = [&](int kt, int stage) {
        unsigned char* st = smem + stage * STAGE_BYTES;
        const int k0 = kt * BK;
#pragma unroll
        for (int l = 0; l < 4; ++l) {  // A: 128 rows x 8 chunks
            const int i = tid + THREADS * l, r = i / 8, c = i % 8;
            const bool ok = row0 + r < M && k0 + c * 8 < K;
            cp_async_16(st + a_off(r, c), ok ? A + (size_t)(row0 + r) * K + k0 + c * 8 : A, ok);
        }
#pragma unroll
        for (int l = 0; l < 4; ++l) {  // B: 64 rows x 16 chunks
            const int i = tid + THREADS * l, k = i / 16, c = i % 16;
            const bool ok = k0 + k < K && col0 + c * 8 < N;
            cp_async_16(st + b_off(k, c), ok ? B + (size_t)(k0 + k) * N + col0 + c * 8 : B, ok);
        }
    };

    float acc[4][4][4] = {};
    const int KT = (K + BK - 1) / BK;
#pragma unroll 1
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) issue(s, s);
        cp_async_commit();
    }
#pragma unroll 1
    for (int kt = 0; kt < KT; ++kt) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        if (kt + STAGES - 1 < KT) issue(kt + STAGES - 1, (kt + STAGES - 1) % STAGES);
        cp_async_commit();
        const uint32_t st = base + (kt % STAGES) * STAGE_BYTES;
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks) {
            uint32_t a[4][4], b[2][4];
#pragma unroll
            for (int i = 0; i < 4; ++i)  // lanes 0-15: rows 0-15 at k chunk 2ks, lanes 16-31 the next chunk
                ldmatrix_x4(a[i], st + a_off(wr * 64 + i * 16 + lane % 16, 2 * ks + lane / 16));
#pragma unroll
            for (int j = 0; j < 2; ++j)  // matrices: (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15)
                ldmatrix_x4_trans(b[j], st + b_off(ks * 16 + lane % 8 + 8 * ((lane / 8) % 2), (wc * 32 + j * 16) / 8 + lane / 16));
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) mma16816<T>(acc[i][j], a[i], b[j / 2][2 * (j % 2)], b[j / 2][2 * (j % 2) + 1]);
        }
    }
    cp_async_wait<0>();
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + wr * 64 + i * 16 + lane / 4 + 8 * h, c = col0 + wc * 32 + j * 8 + 2 * (lane % 4);
                if (r < M && c < N) *reinterpret_cast<float2*>(C + (size_t)r * N + c) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
            }
}
