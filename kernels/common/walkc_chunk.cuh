// Walk C: one 16-byte global load of an input type, widened to floats.
// Chunk<T>::VEC elements of T fill 16 bytes (4 floats, 8 halves or bfloat16s);
// load() reads them with one LDG.128 (the address must be 16-byte aligned: the
// stages that use it declare N and K multiples of VEC) and widen() converts
// them to FP32, exactly (every fp16 and bf16 value is an FP32 value).
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T>
struct Chunk;

template <>
struct Chunk<float> {
    static constexpr int VEC = 4;
    using Raw = float4;
    __device__ static __forceinline__ Raw load(const float* p) { return *reinterpret_cast<const float4*>(p); }
    __device__ static __forceinline__ Raw zero() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }
    __device__ static __forceinline__ void widen(const Raw& r, float (&f)[4]) { f[0] = r.x; f[1] = r.y; f[2] = r.z; f[3] = r.w; }
};

// 8 x 16-bit values as a uint4; H2 is the packed pair type, widen2 its exact FP32 conversion.
template <typename T, typename H2>
struct Chunk16 {
    static constexpr int VEC = 8;
    using Raw = uint4;
    __device__ static __forceinline__ Raw load(const T* p) { return *reinterpret_cast<const uint4*>(p); }
    __device__ static __forceinline__ Raw zero() { return make_uint4(0u, 0u, 0u, 0u); }
    __device__ static __forceinline__ void widen(const Raw& r, float (&f)[8]) {
        const H2* h = reinterpret_cast<const H2*>(&r);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const float2 v = widen2(h[i]);
            f[2 * i] = v.x;
            f[2 * i + 1] = v.y;
        }
    }
    __device__ static __forceinline__ float2 widen2(const __half2 v) { return __half22float2(v); }
    __device__ static __forceinline__ float2 widen2(const __nv_bfloat162 v) { return __bfloat1622float2(v); }
};

template <>
struct Chunk<__half> : Chunk16<__half, __half2> {};
template <>
struct Chunk<__nv_bfloat16> : Chunk16<__nv_bfloat16, __nv_bfloat162> {};
