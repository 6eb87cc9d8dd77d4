// 03 blocktile_1d: each thread computes TM = 8 elements of one column of C.
// A 64 x 64 block tile (BK = 8) with 512 threads; per k a thread reads one Bs
// value into a register and reuses it for 8 FMAs against 8 As values (a warp
// shares one As address: a broadcast). Shared-memory loads per FMA drop from 2
// to 9/8, and each thread's 8 sums live in registers.
constexpr int BM = 64, BN = 64, BK = 8, TM = 8, THREADS = (BM / TM) * BN;

extern "C" __global__ void __launch_bounds__(THREADS)
c_blocktile_1d(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    const int t = threadIdx.x;
    const int tx = t % BN, ty = t / BN;  // column tx, rows ty*TM .. ty*TM+TM-1
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int a_r = t / BK, a_c = t % BK, b_r = t / BN, b_c = t % BN;  // one element of each tile per thread
    float acc[TM] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        As[a_r][a_c] = (row0 + a_r < M && k0 + a_c < K) ? A[(size_t)(row0 + a_r) * K + k0 + a_c] : 0.0f;
        Bs[b_r][b_c] = (k0 + b_r < K && col0 + b_c < N) ? B[(size_t)(k0 + b_r) * N + col0 + b_c] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float b = Bs[k][tx];
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] += As[ty * TM + i][k] * b;
        }
        __syncthreads();
    }
    const int col = col0 + tx;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + ty * TM + i;
        if (row < M && col < N) C[(size_t)row * N + col] = acc[i];
    }
}
