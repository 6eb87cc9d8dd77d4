// 12 multibuf: 10 (128x64 tile, 256 threads, 8x4 per thread, supertile remap)
// with the A/B tiles fetched by cp.async into a 3-stage ring of shared buffers:
// while the block computes tile kt, tiles kt+1 and kt+2 are already in flight,
// and data goes global -> shared without passing through registers. BK drops to
// 16 so three stages fit in 43,008 bytes of dynamic shared memory. cp.async
// writes 16-byte chunks, so As rows are padded by 4 floats (not 1) to keep
// every chunk aligned; rows ty and ty+1 are still 20 words apart, different
// banks. Out-of-range chunks are zero-filled by cp.async's src-size operand.
// Needs sm_80+, K % 4 == 0 and N % 4 == 0.
#include "ptx.cuh"
#include "supertile.cuh"

constexpr int BM = 128, BN = 64, BK = 16, TM = 8, TN = 4, THREADS = 256, STAGES = 3;
constexpr int AS_LD = BK + 4;
constexpr int STAGE_FLOATS = BM * AS_LD + BK * BN;  // 3,584 floats = 14,336 bytes, a multiple of 16

extern "C" __global__ void __launch_bounds__(THREADS, 2)
sgemm_multibuf(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ __align__(16) float smem[];
    const int t = threadIdx.x;
    const int tx = t % 16, ty = t / 16;
    int tile_row, tile_col;
    supertile_4x4(tile_row, tile_col);
    const int row0 = tile_row * BM, col0 = tile_col * BN;

    auto load_tile = [&](int kt, int stage) {
        float* as = smem + stage * STAGE_FLOATS;
        float* bs = as + BM * AS_LD;
        const int k0 = kt * BK;
#pragma unroll
        for (int l = 0; l < BM * BK / 4 / THREADS; ++l) {
            const int id = t + THREADS * l, r = id / (BK / 4), c = id % (BK / 4) * 4;
            const bool ok = row0 + r < M && k0 + c < K;
            cp_async_16(as + r * AS_LD + c, ok ? A + (size_t)(row0 + r) * K + k0 + c : A, ok);
        }
#pragma unroll
        for (int l = 0; l < BK * BN / 4 / THREADS; ++l) {
            const int id = t + THREADS * l, r = id / (BN / 4), c = id % (BN / 4) * 4;
            const bool ok = k0 + r < K && col0 + c < N;
            cp_async_16(bs + r * BN + c, ok ? B + (size_t)(k0 + r) * N + col0 + c : B, ok);
        }
    };

    const int KT = (K + BK - 1) / BK;
    // Prologue: tiles 0 .. STAGES-2 in flight. Every thread commits one group per
    // tile slot, empty or not, so the wait count below is the same for all.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) load_tile(s, s);
        cp_async_commit();
    }
    float acc[TM][TN] = {};
    for (int kt = 0; kt < KT; ++kt) {
        cp_async_wait<STAGES - 2>();  // this thread's copies of tile kt have landed
        // All threads' copies of tile kt are visible, and every thread is done
        // with tile kt-1, whose buffer ((kt-1) % STAGES) the next load reuses.
        __syncthreads();
        if (kt + STAGES - 1 < KT) load_tile(kt + STAGES - 1, (kt + STAGES - 1) % STAGES);
        cp_async_commit();
        const float* as = smem + (kt % STAGES) * STAGE_FLOATS;
        const float* bs = as + BM * AS_LD;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 b = *reinterpret_cast<const float4*>(bs + k * BN + 4 * tx);
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const float a = as[(ty + 16 * i) * AS_LD + k];
                acc[i][0] += a * b.x; acc[i][1] += a * b.y; acc[i][2] += a * b.z; acc[i][3] += a * b.w;
            }
        }
    }
    const int c = col0 + 4 * tx;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + ty + 16 * i;
        if (r < M && c < N)
            *reinterpret_cast<float4*>(&C[(size_t)r * N + c]) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    }
}
