// Walk D's 14 (cluster_pair): the two CTAs of a thread-block cluster share each tile of the product.
// run_split: 128 x WIDTH tiles whose K is split in two halves between the two CTAs, the halves summed through
// distributed shared memory instead of a workspace in global memory. Both CTAs of a cluster walk the same tiles
// (cluster i: tiles i, i + clusters, ..., grouped order); CTA rank r multiplies k tiles [r * (KT / 2), r ? KT : KT / 2)
// of each with 05's producer / two-consumer pipeline (09's ring, as deep as the width allows). Then consumer warpgroup
// c of CTA r either owns its 64 rows (c == r): it waits for the peer's partial of those rows, adds it and stores C; or
// sends them (c != r): its 64 x WIDTH accumulators go to the peer's receive buffer with st.async, each 16-byte store
// counting its bytes on the peer's `recv_full` mbarrier (complete_tx, as a TMA load does). So each CTA sends 32 KB
// (WIDTH 128) and receives 32 KB a tile, no fences, no counters in global memory, no workspace; the sum is
// partial(rank 0) + partial(rank 1) either way (FP32 addition of two terms commutes), whichever CTA finishes first.
// The receive buffer: 64 x WIDTH floats past the 192 KB ring (12's staging space), in the accumulators' order
// (float4 g of thread t at (g * 128 + t) * 16 bytes: a warp's stores and loads are 512 contiguous bytes). Walks of
// several tiles reuse it: the owner arrives on the sender's `recv_empty` (remote) once it has read a tile's partial,
// and the sender waits for that before its next tile's stores; the last tile skips both, so no CTA is signalled after
// it may have exited. The peer's barriers are initialised before anyone uses them: every thread arrives on the cluster
// barrier after the local setup, and the consumers wait on it only before their first exchange (after the first
// tile's k loop), so the wait costs nothing on the path to the first load.
// N % 8 == 0, K % 8 == 0 (TMA), any M, K of two k tiles at least (the plan's rule).
#pragma once
#include "stream_k.cuh"

namespace cluster_pair {
using persistent_ws::A_BYTES, persistent_ws::B_PANEL, persistent_ws::BK, persistent_ws::BM, persistent_ws::cdiv, persistent_ws::GROUP;
enum : int {
    RECV_OFFSET = persistent_ws::SMEM_BYTES,  // the receive buffer: past the ring, where 12 keeps its staging buffers
    RECV_BYTES = tma_store::BYTES,            // 32 KB: 64 rows x 128 FP32 columns
};

__device__ __forceinline__ uint32_t peer_address(const void* p, uint32_t cta) {
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_u32(p)), "r"(cta));
    return remote;
}

// Every thread of the cluster, in two halves: arrive (release: this CTA's barrier initialisation), later wait (acquire).
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release;\n" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory"); }

// 16 bytes into the peer's shared memory at `remote`, counted on the peer's mbarrier at `remote_bar`.
__device__ __forceinline__ void st_async(uint32_t remote, float4 v, uint32_t remote_bar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n"
                 ::"r"(remote), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(remote_bar) : "memory");
}

// mbar_wait with acquire at cluster scope: the phase was completed from the peer CTA (its st.async bytes or arrive).
__device__ __forceinline__ void wait_cluster(uint64_t* bar, int parity) {
    asm volatile(
        "{\n.reg .pred done;\nWAIT:\n"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT;\n}\n" ::"r"(smem_u32(bar)), "r"(parity) : "memory");
}

// One arrive on the peer's mbarrier, ordered after this thread's (and, through the warpgroup barrier before it, its
// warpgroup's) reads of the receive buffer.
__device__ __forceinline__ void arrive_remote_release(uint32_t remote_bar) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar) : "memory");
}

template <typename T, int WIDTH>
__device__ __forceinline__ void run_split(const TensorMap& tma_a, const TensorMap& tma_b, float* __restrict__ C, int M, int N, int K) {
    using Ring = stream_k::Ring<WIDTH>;
    extern __shared__ __align__(1024) unsigned char smem[];
    __shared__ uint64_t full[Ring::STAGES], empty[Ring::STAGES], recv_full, recv_empty;
    const int tid = threadIdx.x, wg = tid / 128;
    const uint32_t rank = cluster_rank(), peer = rank ^ 1;
    if (tid == 0) {
        prefetch_tensormap(tma_a);
        prefetch_tensormap(tma_b);
        for (int s = 0; s < Ring::STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 256);
        }
        mbar_init(&recv_full, 1);   // the owner's arrive (with the bytes it expects) and the peer's st.async bytes
        mbar_init(&recv_empty, 1);  // the peer owner's arrive: it has read our last partial
        mbar_init_fence();
    }
    __syncthreads();
    cluster_arrive();
    const int tiles_m = cdiv(M, BM), tiles_n = cdiv(N, WIDTH), tiles = tiles_m * tiles_n, KT = cdiv(K, BK);
    const int k0 = rank ? KT / 2 : 0, k1 = rank ? KT : KT / 2;
    const int cluster = blockIdx.x / 2, clusters = gridDim.x / 2;

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (tid == 0) {
            int it = 0;
#pragma unroll 1
            for (int t = cluster; t < tiles; t += clusters) {
                int tm, tn;
                grouped_tile<GROUP>(t, tiles_m, tiles_n, tm, tn);
#pragma unroll 1
                for (int kt = k0; kt < k1; ++kt, ++it) {
                    const int st = it % Ring::STAGES;
                    if (it >= Ring::STAGES) mbar_wait(&empty[st], (it / Ring::STAGES - 1) & 1);
                    unsigned char* stage = smem + st * Ring::STAGE;
                    mbar_arrive_expect_tx(&full[st], Ring::STAGE);
                    tma_load_2d(stage, &tma_a, &full[st], kt * BK, tm * BM);
#pragma unroll
                    for (int p = 0; p < WIDTH / 64; ++p)
                        tma_load_2d(stage + A_BYTES + p * B_PANEL, &tma_b, &full[st], tn * WIDTH + p * 64, kt * BK);
                }
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int c = wg - 1, t128 = tid % 128;
        const bool owner = c == (int)rank;
        float4* recv = reinterpret_cast<float4*>(smem + RECV_OFFSET);
        const uint32_t peer_recv = peer_address(recv, peer), peer_full = peer_address(&recv_full, peer),
                       peer_empty = peer_address(&recv_empty, peer);
        int it = 0, round = 0;
#pragma unroll 1
        for (int t = cluster; t < tiles; t += clusters, ++round) {
            int tm, tn;
            grouped_tile<GROUP>(t, tiles_m, tiles_n, tm, tn);
            float acc[WIDTH / 2] = {};
#pragma unroll 1
            for (int kt = k0; kt < k1; ++kt, ++it) {
                const int st = it % Ring::STAGES;
                mbar_wait(&full[st], (it / Ring::STAGES) & 1);
                const unsigned char* stage = smem + st * Ring::STAGE;
                wgmma_k_tile<WIDTH, BK, T>(acc, stage + c * 64 * 128, stage + A_BYTES, B_PANEL);
                wgmma_wait<1>();
                if (kt > k0) mbar_arrive(&empty[(it - 1) % Ring::STAGES]);
            }
            wgmma_wait<0>();
            fence_acc(acc);
            mbar_arrive(&empty[(it - 1) % Ring::STAGES]);
            if (round == 0) cluster_wait();  // the peer's barriers are initialised
            const bool last = t + clusters >= tiles;
            if (owner) {
                if (t128 == 0) mbar_arrive_expect_tx(&recv_full, 64 * WIDTH * 4);
                wait_cluster(&recv_full, round & 1);
#pragma unroll
                for (int g = 0; g < WIDTH / 8; ++g) {
                    const float4 v = recv[g * 128 + t128];
                    acc[4 * g] += v.x;
                    acc[4 * g + 1] += v.y;
                    acc[4 * g + 2] += v.z;
                    acc[4 * g + 3] += v.w;
                }
                if (!last) {
                    tma_store::warpgroup_sync(c);  // every thread has read the buffer
                    if (t128 == 0) arrive_remote_release(peer_empty);
                }
                store_acc<WIDTH>(acc, C, M, N, tm * BM + c * 64, tn * WIDTH);
            } else {
                if (round > 0) wait_cluster(&recv_empty, (round - 1) & 1);  // the peer has read our previous partial
#pragma unroll
                for (int g = 0; g < WIDTH / 8; ++g)
                    st_async(peer_recv + (g * 128 + t128) * 16, make_float4(acc[4 * g], acc[4 * g + 1], acc[4 * g + 2], acc[4 * g + 3]),
                             peer_full);
            }
        }
    }
}
}  // namespace cluster_pair
