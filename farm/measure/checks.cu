// The harness's own kernels: a cell's random inputs in their storage precision, their exact FP64 values, and the
// element-wise check of an output against its reference. Compiled like every stage (NVRTC, cached on disk,
// in the background when a worker starts), so that no cell waits for CuPy to generate and compile its generic
// element-wise kernels, seconds of a fresh machine's first cell. All but the last two (a padded stage's copies) take a
// grid-stride loop over n elements.
#include <cuda_fp16.h>
#include <cuda_fp8.h>

// N(0,1) normals, element i a function of (seed, i) alone: splitmix64 of the counter gives two 24-bit uniforms
// at the midpoints of their bins, so neither is 0 or 1 and no normal is exactly zero (|z| < 5.8), then Box-Muller.
__device__ __forceinline__ unsigned long long splitmix64(unsigned long long x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

__global__ void normals(float* __restrict__ x, long long n, unsigned long long seed) {
    const unsigned long long stream = splitmix64(seed);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const unsigned long long bits = splitmix64(stream ^ (unsigned long long)i);
        const float u1 = ((float)(bits >> 40) + 0.5f) * 0x1p-24f;
        const float u2 = ((float)((bits >> 16) & 0xFFFFFFu) + 0.5f) * 0x1p-24f;
        x[i] = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    }
}

// FP32 -> IEEE half, round to nearest even.
__global__ void to_half(const float* __restrict__ x, __half* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = __float2half_rn(x[i]);
}

// FP32 -> bfloat16 bit pattern, round to nearest even (finite inputs: the farm's are N(0,1)).
__global__ void to_bf16_bits(const float* __restrict__ x, unsigned short* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const unsigned int u = __float_as_uint(x[i]);
        y[i] = (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
    }
}

// FP8 with a per-tensor scale, in two passes over the FP32 normals: amax finds the largest |x| (zeroed by the caller,
// an FP32 bit pattern: non-negative floats order as their bits), then to_fp8 takes the dequantisation factor
// scale = amax / FP8_MAX (written to *scale by one thread) and stores each element as q = x / scale rounded to
// nearest even, saturating at the format's largest finite value; q * scale is the element's value.
__global__ void amax(const float* __restrict__ x, long long n, unsigned int* __restrict__ amax_bits) {
    float m = 0.0f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        m = fmaxf(m, fabsf(x[i]));
    for (int offset = 16; offset > 0; offset /= 2) m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, offset));
    if (threadIdx.x % 32 == 0) atomicMax(amax_bits, __float_as_uint(m));
}

// The formats' largest finite values (OCP 8-bit floating point: E4M3 448, E5M2 57344).
template <__nv_fp8_interpretation_t F>
__device__ __forceinline__ float fp8_max() { return F == __NV_E4M3 ? 448.0f : 57344.0f; }

template <__nv_fp8_interpretation_t F>
__global__ void to_fp8(const float* __restrict__ x, unsigned char* __restrict__ y, long long n,
                       const unsigned int* __restrict__ amax_bits, float* __restrict__ scale) {
    const float s = __uint_as_float(*amax_bits) / fp8_max<F>();
    if (blockIdx.x == 0 && threadIdx.x == 0) *scale = s;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = __nv_cvt_float_to_fp8(x[i] / s, __NV_SATFINITE, F);
}

// The exact dequantised values q * scale of FP8 storage as FP64 (an FP8 value has at most 4 significant bits and
// the scale 24, so the product is exact).
template <__nv_fp8_interpretation_t F>
__global__ void widen_fp8(const unsigned char* __restrict__ x, const float* __restrict__ scale, double* __restrict__ y, long long n) {
    const double s = *scale;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = (double)__half2float(__half(__nv_cvt_fp8_to_halfraw(x[i], F))) * s;
}

__device__ __forceinline__ double exact(float v) { return v; }
__device__ __forceinline__ double exact(__half v) { return __half2float(v); }

// The exact values of FP32 or half storage as FP64.
template <typename T>
__global__ void widen(const T* __restrict__ x, double* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = exact(x[i]);
}

// The exact values of bfloat16 bit patterns as FP64.
__global__ void widen_bf16(const unsigned short* __restrict__ x, double* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = __uint_as_float((unsigned int)x[i] << 16);
}

// out[i] passes when |out - ref| <= atol + rtol * |ref|, in FP64; NaN never passes. stats (zeroed by the
// caller): [0] elements that failed, [1] and [2] the largest |out - ref| and |out - ref| / bound as FP64 bit
// patterns (a NaN counted as +inf). Non-negative doubles order as their bits do, so an integer max suffices.
template <typename Ref>
__global__ void compare(const float* __restrict__ out, const Ref* __restrict__ ref, long long n, double atol,
                        double rtol, unsigned long long* __restrict__ stats) {
    const double inf = __longlong_as_double(0x7ff0000000000000LL);
    unsigned long long failed = 0;
    double worst = 0.0, worst_scaled = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const double r = (double)ref[i];
        const double err = fabs((double)out[i] - r);
        const double bound = atol + rtol * fabs(r);
        failed += !(err <= bound);
        const double scaled = err / bound;
        worst = fmax(worst, isnan(err) ? inf : err);
        worst_scaled = fmax(worst_scaled, isnan(scaled) ? inf : scaled);
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        failed += __shfl_down_sync(0xffffffffu, failed, offset);
        worst = fmax(worst, __shfl_down_sync(0xffffffffu, worst, offset));
        worst_scaled = fmax(worst_scaled, __shfl_down_sync(0xffffffffu, worst_scaled, offset));
    }
    if (threadIdx.x % 32 == 0) {
        atomicAdd(&stats[0], failed);
        atomicMax(&stats[1], (unsigned long long)__double_as_longlong(worst));
        atomicMax(&stats[2], (unsigned long long)__double_as_longlong(worst_scaled));
    }
}

// A stage that runs N padded (farm/measure/padding.py): `padded` (rows x padded_cols, rows of whole 16-byte chunks)
// from `x` (rows x cols), zeros in columns cols..padded_cols-1, and back. A thread moves one 16-byte chunk of a padded
// row, so its access to the padded side is one vector load or store and a warp's accesses to either side are
// contiguous; threads stride over the chunks of a row along x and over rows along y.
template <typename T>
union Chunk {
    static constexpr int V = 16 / sizeof(T);  // elements
    uint4 bits;
    T e[V];
};

// move(r, c) for the chunk of row r that starts at column c, for every chunk of a rows x padded_cols matrix of T.
template <typename T, typename Move>
__device__ __forceinline__ void for_each_chunk(long long rows, long long padded_cols, Move move) {
    for (long long r = blockIdx.y * (long long)blockDim.y + threadIdx.y; r < rows; r += (long long)gridDim.y * blockDim.y)
        for (long long c = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * Chunk<T>::V; c < padded_cols;
             c += (long long)gridDim.x * blockDim.x * Chunk<T>::V)
            move(r, c);
}

template <typename T>
__global__ void pad_columns(const T* __restrict__ x, T* __restrict__ padded, long long rows, long long cols,
                            long long padded_cols) {
    for_each_chunk<T>(rows, padded_cols, [&](long long r, long long c) {
        Chunk<T> chunk;
#pragma unroll
        for (int j = 0; j < Chunk<T>::V; ++j) chunk.e[j] = c + j < cols ? x[r * cols + c + j] : T(0);
        *reinterpret_cast<uint4*>(padded + r * padded_cols + c) = chunk.bits;
    });
}

template <typename T>
__global__ void unpad_columns(const T* __restrict__ padded, T* __restrict__ x, long long rows, long long cols,
                              long long padded_cols) {
    for_each_chunk<T>(rows, padded_cols, [&](long long r, long long c) {
        Chunk<T> chunk;
        chunk.bits = *reinterpret_cast<const uint4*>(padded + r * padded_cols + c);
#pragma unroll
        for (int j = 0; j < Chunk<T>::V; ++j)
            if (c + j < cols) x[r * cols + c + j] = chunk.e[j];
    });
}
