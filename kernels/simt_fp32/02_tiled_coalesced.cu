// 02 tiled_coalesced: same 32x32 tiles and 2x2 outputs per thread as 01, but a
// thread owns columns tx and tx+16 instead of 2tx and 2tx+1. Sixteen adjacent
// threads now touch 16 consecutive floats (64 bytes, two whole 32-byte sectors)
// on every global load and store, and read 16 consecutive words of Bs, one per
// bank. Rows stay ty and ty+16: a warp reads As at rows ty and ty+1, 32 words
// apart, which is still a 2-way bank conflict (padding comes in 05).
#define TILE 32

extern "C" __global__ void __launch_bounds__(256)
sgemm_tiled_coalesced(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc[2][2] = {};
    for (int k0 = 0; k0 < K; k0 += TILE) {
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const int r = ty + 16 * i, c = tx + 16 * j;
                As[r][c] = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : 0.0f;
                Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(size_t)(k0 + r) * N + col0 + c] : 0.0f;
            }
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < TILE; ++k) {
            const float a0 = As[ty][k], a1 = As[ty + 16][k];
            const float b0 = Bs[k][tx], b1 = Bs[k][tx + 16];
            acc[0][0] += a0 * b0; acc[0][1] += a0 * b1;
            acc[1][0] += a1 * b0; acc[1][1] += a1 * b1;
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
            if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
        }
}
