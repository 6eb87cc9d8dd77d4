// 01 wgmma: the same 128x128x64 tile and 3-stage cp.async pipeline as 00, but the
// math is Hopper's warpgroup MMA: 2 warpgroups, each wgmma m64n128k16 on its 64 rows,
// both operands read by the tensor cores straight from shared memory through
// descriptors (no ldmatrix, no fragment registers). A is K-major; B (K x N, N
// contiguous) is MN-major, i.e. wgmma's transposed B (tnspB = 1), legal for 16-bit
// inputs. The cp.async writes are ordinary (generic-proxy) stores read by the async
// proxy, hence the proxy fence before the barrier. Each k tile is waited out
// (wait_group 0) before the barrier that lets its buffer be refilled: simple, and the
// tensor cores idle across that barrier (02 and 03 remove it). N % 8, K % 8 == 0.
#include "ptx.cuh"
#include "hopper.cuh"

namespace d01 {
constexpr int BM = 128, BN = 128, BK = 64, STAGES = 3, THREADS = 256;
constexpr int A_BYTES = BM * BK * 2, STAGE_BYTES = A_BYTES + BK * BN * 2;
enum : int { SMEM_BYTES = STAGES * STAGE_BYTES };  // dynamic
// B is stored as BN / 64 column panels of BK rows x 128 bytes each.
constexpr uint32_t B_PANEL = BK * 128;

__device__ __forceinline__ uint32_t a_off(int r, int chunk) { return r * 128 + ((chunk ^ (r & 7)) << 4); }
__device__ __forceinline__ uint32_t b_off(int k, int chunk) { return A_BYTES + (chunk / 8) * B_PANEL + k * 128 + (((chunk % 8) ^ (k & 7)) << 4); }
}  // namespace d01

template <typename T>
__global__ void __launch_bounds__(d01::THREADS, 1)
d_wgmma(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using namespace d01;
    extern __shared__ __align__(1024) unsigned char smem[];
    const int tid = threadIdx.x, wg = tid / 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    auto issue = [&](int kt, int stage) {
        unsigned char* st = smem + stage * STAGE_BYTES;
        const int k0 = kt * BK;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const int i = tid + THREADS * l, r = i / 8, c = i % 8;
            const bool ok = row0 + r < M && k0 + c * 8 < K;
            cp_async_16(st + a_off(r, c), ok ? A + (size_t)(row0 + r) * K + k0 + c * 8 : A, ok);
        }
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const int i = tid + THREADS * l, k = i / 16, c = i % 16;
            const bool ok = k0 + k < K && col0 + c * 8 < N;
            cp_async_16(st + b_off(k, c), ok ? B + (size_t)(k0 + k) * N + col0 + c * 8 : B, ok);
        }
    };

    float acc[BN / 2] = {};
    const int KT = (K + BK - 1) / BK;
#pragma unroll 1
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) issue(s, s);
        cp_async_commit();
    }
#pragma unroll 1
    for (int kt = 0; kt < KT; ++kt) {
        cp_async_wait<STAGES - 2>();
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();
        if (kt + STAGES - 1 < KT) issue(kt + STAGES - 1, (kt + STAGES - 1) % STAGES);
        cp_async_commit();
        const unsigned char* st = smem + (kt % STAGES) * STAGE_BYTES;
        wgmma_k_tile<BN, BK, T>(acc, st + wg * 64 * 128, st + A_BYTES, B_PANEL);
        wgmma_wait<0>();
        fence_acc(acc);
    }
    cp_async_wait<0>();
    store_acc<BN>(acc, C, M, N, row0 + wg * 64, col0);
}
