// 06 gmem_vec: 05 with the C store vectorised. A thread's 4 adjacent outputs
// of a row leave as one STG.128, so a warp's store fills whole 32-byte sectors
// (05's scalar stores used 8 bytes of each sector per instruction). Needs
// N % 4 == 0 so every row of C starts 16-byte aligned; then a 4-column group is
// either wholly inside N or wholly outside it.
constexpr int BM = 64, BN = 64, BK = 32, TM = 8, TN = 4, THREADS = 128;

extern "C" __global__ void __launch_bounds__(THREADS, 3)
sgemm_gmem_vec(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[BM][BK + 1];
    __shared__ __align__(16) float Bs[BK][BN];
    const int t = threadIdx.x;
    const int tx = t % 16, ty = t / 16;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int l = 0; l < BM * BK / THREADS; ++l) {
            const int r = t / 32 + 4 * l, c = t % 32;
            As[r][c] = (row0 + r < M && k0 + c < K) ? A[(size_t)(row0 + r) * K + k0 + c] : 0.0f;
        }
#pragma unroll
        for (int l = 0; l < BK * BN / THREADS; ++l) {
            const int r = t / 64 + 2 * l, c = t % 64;
            Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(size_t)(k0 + r) * N + col0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 b = *reinterpret_cast<const float4*>(&Bs[k][4 * tx]);
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const float a = As[ty + 8 * i][k];
                acc[i][0] += a * b.x; acc[i][1] += a * b.y; acc[i][2] += a * b.z; acc[i][3] += a * b.w;
            }
        }
        __syncthreads();
    }
    const int c = col0 + 4 * tx;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + ty + 8 * i;
        if (r < M && c < N)
            *reinterpret_cast<float4*>(&C[(size_t)r * N + c]) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    }
}
