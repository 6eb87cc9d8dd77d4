// Test-only kernels that cheat after their first launch, for tests/test_gpu_trust.py. They never enter the catalog.
// Each computes C = A.B (FP32, row-major, one thread an element) on its first launch in a module; a grid-wide
// counter tells later launches that the first is over (the last block of the first launch to finish sets `done`).

__device__ unsigned int blocks_finished;
__device__ unsigned int done;

__device__ float dot(const float* A, const float* B, int N, int K, int row, int col) {
    float acc = 0.f;
    for (int i = 0; i < K; ++i) acc += A[row * K + i] * B[i * N + col];
    return acc;
}

__device__ void mark_block_finished() {
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        __threadfence();
        if (atomicAdd(&blocks_finished, 1u) + 1 == gridDim.x * gridDim.y) atomicExch(&done, 1u);
    }
}

// Works on its first launch only; later launches return at once (C keeps whatever it held).
extern "C" __global__ void first_launch_only(const float* A, const float* B, float* C, int M, int N, int K) {
    if (*(volatile unsigned int*)&done) return;
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) C[row * N + col] = dot(A, B, N, K, row, col);
    mark_block_finished();
}

// Keeps its first result in the workspace W and copies it into C on later launches, whatever the inputs.
extern "C" __global__ void cached_result(const float* A, const float* B, float* C, float* W, int M, int N, int K) {
    bool replay = *(volatile unsigned int*)&done;
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        if (replay) {
            C[row * N + col] = W[row * N + col];
        } else {
            float v = dot(A, B, N, K, row, col);
            C[row * N + col] = v;
            W[row * N + col] = v;
        }
    }
    if (!replay) mark_block_finished();
}

// Writes all of C on its first launch, then only the top half of its rows.
extern "C" __global__ void half_c_later(const float* A, const float* B, float* C, int M, int N, int K) {
    bool replay = *(volatile unsigned int*)&done;
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < (replay ? M / 2 : M) && col < N) C[row * N + col] = dot(A, B, N, K, row, col);
    if (!replay) mark_block_finished();
}
