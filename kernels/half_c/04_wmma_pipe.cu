// 04 wmma_pipe: the asynchronous-copy pipeline variant of 03 (the write-up's
// cuda::pipeline kernel, which it found slower than double buffering; written
// here with the cp.async PTX of common/ptx.cuh, as NVRTC lacks <cuda/pipeline>).
// Tiles go global -> shared without passing through registers, STAGES buffers
// deep: tiles kt+1 .. kt+STAGES-1 are in flight while kt is computed. cp.async
// group g always holds tile g (empty past the end), so the wait count is a
// constant; the barrier after the wait both publishes tile kt and proves every
// warp has finished tile kt-1, whose buffer the next copy reuses. Out-of-range
// chunks are zero-filled by the copy itself (source size 0). sm_80+; any M,
// N % 8 == 0, K % 8 == 0. Ladder stage: 02's tile, 3 stages.
#include "ptx.cuh"
#include "walkc_wmma.cuh"

// (min 1 block per SM: without it ptxas aims at 128 registers for some tiles and spills)
template <typename T, int BM, int BN, int BK, int WM, int WN, int STAGES>
__global__ void __launch_bounds__(32 * (BM / WM) * (BN / WN), 1)
h_wmma_pipe(const T* __restrict__ A, const T* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    using namespace walkc;
    using L = WmmaTile<BM, BN, BK, WM, WN>;
    static_assert(STAGES >= 2, "at least one tile in flight");
    extern __shared__ __align__(128) unsigned char smem[];
    T* tile = reinterpret_cast<T*>(smem);
    const int warp = threadIdx.x / 32, wr = warp / L::WARPS_N, wc = warp % L::WARPS_N;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    auto issue = [&](int kt, int stage) {  // cp.async tile kt into buffer `stage`
        T* st = tile + stage * L::STAGE_ELEMS;
        const int k0 = kt * BK;
#pragma unroll
        for (int l = 0; l < L::A_CHUNKS / L::THREADS; ++l) {
            int r, k;
            a_chunk<BK>(threadIdx.x + L::THREADS * l, r, k);
            const bool ok = row0 + r < M && k0 + k < K;
            cp_async_16(st + r * L::LDA + k, ok ? A + (size_t)(row0 + r) * K + k0 + k : A, ok);
        }
#pragma unroll
        for (int l = 0; l < L::B_CHUNKS / L::THREADS; ++l) {
            int k, c;
            b_chunk<BN>(threadIdx.x + L::THREADS * l, k, c);
            const bool ok = k0 + k < K && col0 + c < N;
            cp_async_16(st + L::A_ELEMS + k * L::LDB + c, ok ? B + (size_t)(k0 + k) * N + col0 + c : B, ok);
        }
    };

    FragC acc[L::FM][L::FN];
    zero_acc(acc);
    const int KT = (K + BK - 1) / BK;
#pragma unroll 1
    for (int s = 0; s < STAGES - 1; ++s) {  // prologue: tiles 0 .. STAGES-2
        if (s < KT) issue(s, s);
        cp_async_commit();
    }
    int read = 0, write = STAGES - 1;
    for (int kt = 0; kt < KT; ++kt) {
        // Committed: groups 0 .. kt+STAGES-2. At most STAGES-2 pending => group kt (tile kt) landed.
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        if (kt + STAGES - 1 < KT) issue(kt + STAGES - 1, write);  // the buffer tile kt-1 was computed from
        cp_async_commit();
        const T* cur = tile + read * L::STAGE_ELEMS;
        warp_mma<T, BK, L::LDA, L::LDB>(acc, cur + wr * WM * L::LDA, cur + L::A_ELEMS + wc * WN);
        read = read + 1 == STAGES ? 0 : read + 1;
        write = write + 1 == STAGES ? 0 : write + 1;
    }
    cp_async_wait<0>();  // only empty groups remain; then every warp is past its last fragment load
    __syncthreads();
    store_acc(acc, C, M, N, row0 + wr * WM, col0 + wc * WN, reinterpret_cast<float*>(smem) + 256 * warp);
}
