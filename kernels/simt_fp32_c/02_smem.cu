// 02 smem: the block stages 32 x 32 tiles of A and B in shared memory (one
// coalesced element per thread each), then every thread reads its row of As
// (a broadcast) and its column of Bs (32 banks) 32 times. Each global element
// is now fetched by the block once instead of 32 times; the cost moves to
// shared-memory loads (two LDS per FMA). Partial tiles are zero-filled.
constexpr int TILE = 32;
enum : int { BM = TILE, BN = TILE, THREADS = TILE * TILE };

extern "C" __global__ void __launch_bounds__(THREADS)
c_smem(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}
