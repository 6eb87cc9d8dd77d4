// Walk D 11 on: 09's pipeline on a host plan (hopper_d/host_plan.py)
#pragma once
#include "stream_k.cuh"

namespace host_plan {
using namespace stream_k;
using persistent_ws::cdiv;
enum : int { TALL_WIDTH = 192 };  // 20

// TMA_STORE: C from registers (11) or TMA stores (12). DEPENDENT (15): dependent launch. ROWS 64 (17): whole 64-row
// tiles, no stream-K; 256 (20): 256 x 192. LEAN (19): lean k loop. `group`: the tile order's group rows; ORDER (21): k
// in turns; EVICT (24): C evict-first; Ops: Bit16<T>, walk F 09's Fp8
template <bool TMA_STORE, bool DEPENDENT = false, int ROWS = persistent_ws::BM, bool LEAN = false, bool ORDER = false, bool EVICT = false,
          typename Ops>
__device__ __forceinline__ void run(const Ops& ops, const TensorMap& tma_a, const TensorMap& tma_b, const TensorMap* tma_c, float* __restrict__ C,
                                    float* W, int M, int N, int K, int width, int dp, int sk, int group = GROUP) {
    extern __shared__ __align__(1024) unsigned char smem[];
    constexpr bool HALF = ROWS < persistent_ws::BM, TALL = ROWS > persistent_ws::BM;
    __shared__ uint64_t full[Ring<64, ROWS>::STAGES], empty[Ring<64, ROWS>::STAGES];  // deepest ring
    const int tid = threadIdx.x, wg = tid / 128;
    if (tid == 0) {
        prefetch_tensormap(tma_a);
        prefetch_tensormap(tma_b);
        if constexpr (TMA_STORE) prefetch_tensormap(*tma_c);
        ring_init<Ring<64, ROWS>::STAGES>(full, empty, HALF && width == 64 ? 128 : 256);
    }
    __syncthreads();
    after_setup<DEPENDENT>();
    const Schedule s{cdiv(M, ROWS), TALL ? cdiv(N, TALL_WIDTH) : (N + width - 1) >> (31 - __clz(width)), cdiv(K, Ops::K_TILE), dp,
                     HALF ? 0 : sk};  // width: a power of 2

    if (wg == 0) {
        setmaxnreg_dec<TALL ? 24 : 40>();  // 20: 24 + 2 x 240 = 3 x 168
        if (tid == 0) {
            if constexpr (TALL) produce<TALL_WIDTH, ROWS, ORDER>(ops, tma_a, tma_b, s, smem, full, empty, group);
            else if (width == 256) produce<256, ROWS, ORDER>(ops, tma_a, tma_b, s, smem, full, empty, group);
            else if (width == 128) produce<128, ROWS, ORDER>(ops, tma_a, tma_b, s, smem, full, empty, group);
            else produce<64, ROWS, ORDER>(ops, tma_a, tma_b, s, smem, full, empty, group);
        }
    } else {
        setmaxnreg_inc<TALL ? 240 : 232>();
        unsigned char* staging = smem + persistent_ws::SMEM_BYTES + (wg - 1) * 2 * tma_store::BUFFER;
        if constexpr (TALL) consume<TALL_WIDTH, TMA_STORE, ROWS, LEAN, EVICT>(ops, s, smem, full, empty, C, W, M, N, wg - 1, tma_c, staging, group);
        else if (width == 256) consume<256, TMA_STORE, ROWS, LEAN, EVICT>(ops, s, smem, full, empty, C, W, M, N, wg - 1, tma_c, staging, group);
        else if (width == 128) consume<128, TMA_STORE, ROWS, LEAN, EVICT>(ops, s, smem, full, empty, C, W, M, N, wg - 1, tma_c, staging, group);
        else if (!HALF || wg == 1) consume<64, TMA_STORE, ROWS, LEAN, EVICT>(ops, s, smem, full, empty, C, W, M, N, wg - 1, tma_c, staging, group);
    }
}

// 17's body (walk F 09): ROWS 64 over tma_a's 64-row boxes, else (16's; TALL, 20: 256) over tma_a128; TMA stores,
// dependent launch.
template <bool LEAN = false, bool TALL = false, bool ORDER = false, bool EVICT = false, typename Ops>
__device__ __forceinline__ void run_rows(const Ops& ops, const TensorMap& tma_a, const TensorMap& tma_a128, const TensorMap& tma_b,
                                         const TensorMap& tma_c, float* __restrict__ C, float* W, int M, int N, int K, int rows,
                                         int width, int dp, int sk, int group = GROUP) {
    if constexpr (TALL) {
        if (rows == 256) return run<true, true, 256, LEAN, ORDER, EVICT>(ops, tma_a128, tma_b, &tma_c, C, W, M, N, K, width, dp, sk, group);
    }
    if (rows == 64) run<true, true, 64, LEAN, ORDER, EVICT>(ops, tma_a, tma_b, &tma_c, C, W, M, N, K, width, dp, sk, group);
    else run<true, true, persistent_ws::BM, LEAN, ORDER, EVICT>(ops, tma_a128, tma_b, &tma_c, C, W, M, N, K, width, dp, sk, group);
}
}  // namespace host_plan
