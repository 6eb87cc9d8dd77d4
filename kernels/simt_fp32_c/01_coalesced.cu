// 01 coalesced: 00 with the thread -> element mapping swapped (% and /), so the
// lanes of a warp own 32 consecutive columns of one row of C. Per k a warp now
// reads one broadcast A value and 32 consecutive floats of B (one 128-byte
// line), and stores one line of C: every global access is coalesced.
enum : int { BM = 32, BN = 32, THREADS = BM * BN };

extern "C" __global__ void __launch_bounds__(THREADS)
c_coalesced(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    const int row = blockIdx.y * BM + threadIdx.x / 32;
    const int col = blockIdx.x * BN + threadIdx.x % 32;  // consecutive threads: consecutive columns
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
}
