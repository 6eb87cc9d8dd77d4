// cp.async (sm_80+) helpers as inline PTX: NVRTC has no <cuda/pipeline> without
// extra headers, and these three instructions are all a multi-buffered tile needs.
#pragma once

// Copies 16 bytes global -> shared without a register round trip. When `in_range`
// is false the source size is 0: nothing is read and the 16 bytes are zero-filled.
// `src` must still be a valid address, so callers pass the matrix base then.
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, bool in_range) {
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem_dst);
    const int src_bytes = in_range ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_bytes) : "memory");
}

// Closes the group of cp.async issued since the last commit by this thread.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most `Pending` of this thread's committed groups are still in flight.
// Other threads' copies become visible only after a __syncthreads() that follows.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory"); }
