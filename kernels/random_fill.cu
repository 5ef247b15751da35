#include <cmath>

#include "device_math.cuh"
#include "dispatch.cuh"
#include "random_fill.h"

namespace sdpa {
namespace {

using device::from_float;
using device::global_thread_index;
using device::grid_stride;

__device__ __forceinline__ uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <typename T>
__global__ void fill_normal_kernel(T* out, int64_t n, uint64_t key) {
  for (int64_t i = global_thread_index(); i < n; i += grid_stride()) {
    const uint64_t bits = splitmix64(key ^ splitmix64(static_cast<uint64_t>(i)));
    // Two 24-bit uniforms in (0, 1], then Box-Muller.
    const float u1 = (static_cast<float>(bits >> 40) + 1.f) * (1.f / 16777216.f);
    const float u2 = static_cast<float>((bits >> 16) & 0xffffff) * (1.f / 16777216.f);
    const float z = sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
    out[i] = from_float<T>(z);
  }
}

template <typename T>
__global__ void poison_kernel(T* out, int64_t n) {
  for (int64_t i = global_thread_index(); i < n; i += grid_stride()) out[i] = from_float<T>(NAN);
}

}  // namespace

cudaError_t launch_fill_normal(DType t, void* out, int64_t n, uint64_t seed, uint64_t stream_id,
                               cudaStream_t s) {
  const uint64_t key = seed * 0x2545f4914f6cdd1dull + stream_id * 0x9e3779b97f4a7c15ull;
  dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_normal_kernel<T><<<elementwise_grid(n), kElementwiseBlock, 0, s>>>(static_cast<T*>(out), n, key);
  });
  return cudaGetLastError();
}

cudaError_t launch_poison(DType t, void* out, int64_t n, cudaStream_t s) {
  dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    poison_kernel<T><<<elementwise_grid(n), kElementwiseBlock, 0, s>>>(static_cast<T*>(out), n);
  });
  return cudaGetLastError();
}

}  // namespace sdpa
