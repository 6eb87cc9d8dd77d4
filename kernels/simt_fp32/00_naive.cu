// 00 naive: one thread computes one element of C, reading a row of A and a
// column of B straight from global memory. threadIdx.x walks N, so a warp reads
// 32 consecutive floats of B (coalesced) and one broadcast value of A per k.
// Every operand is fetched from DRAM/L2 K times: the floor the ladder climbs from.
// The launch (kernels/sources.py reads it): 16 x 16 threads, one per element of a 16 x 16 tile of C.
enum : int { THREADS_X = 16, THREADS_Y = 16, BM = THREADS_Y, BN = THREADS_X };

extern "C" __global__ void sgemm_naive(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) return;
    const float* a = A + (size_t)row * K;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += a[k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
}
