// 01 tiled: 32x32 tiles of A and B are staged in shared memory, so each value
// fetched from global memory is reused by 32 threads instead of one. 256 threads
// each own a 2x2 block of C (rows ty, ty+16; cols 2tx, 2tx+1), so every shared
// load feeds two FMAs. The thread->column mapping (2 adjacent columns per
// thread, for loads and stores alike) makes each scalar access instruction use
// half of every 32-byte sector a warp touches: step 02 fixes that.
#define TILE 32

extern "C" __global__ void __launch_bounds__(256)
sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc[2][2] = {};
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Each thread loads the 2x2 footprint it computes: adjacent threads are
        // 8 bytes apart, so every 32-byte sector a warp touches is half used.
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const int r = ty + 16 * i, c = 2 * tx + j;
                As[r][c] = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : 0.0f;
                Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(size_t)(k0 + r) * N + col0 + c] : 0.0f;
            }
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < TILE; ++k) {
            const float a0 = As[ty][k], a1 = As[ty + 16][k];
            const float b0 = Bs[k][2 * tx], b1 = Bs[k][2 * tx + 1];
            acc[0][0] += a0 * b0; acc[0][1] += a0 * b1;
            acc[1][0] += a1 * b0; acc[1][1] += a1 * b1;
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int r = row0 + ty + 16 * i, c = col0 + 2 * tx + j;
            if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
        }
}
