// 00 naive: one thread per element of C, operands straight from global memory,
// in a 32 x 32 block of 1024 threads. The thread index walks *rows*: lanes of a
// warp own C[row0 .. row0+31][col], so each k they read 32 A values K floats
// apart (32 transactions) and store C 32 rows apart; only B (one broadcast value
// per warp) is cheap. The floor of the ladder, kept uncoalesced on purpose.
enum : int { BM = 32, BN = 32, THREADS = BM * BN };

extern "C" __global__ void __launch_bounds__(THREADS)
c_naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    const int row = blockIdx.y * BM + threadIdx.x % 32;  // consecutive threads: consecutive rows
    const int col = blockIdx.x * BN + threadIdx.x / 32;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
}
