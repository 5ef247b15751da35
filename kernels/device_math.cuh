// Small device helpers shared by the kernels: conversions and block reductions.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

namespace sdpa::device {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }

template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) { return x; }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }

__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

struct MaxOp {
  static constexpr float identity = -INFINITY;
  __device__ float operator()(float v) const { return warp_max(v); }
};
struct SumOp {
  static constexpr float identity = 0.f;
  __device__ float operator()(float v) const { return warp_sum(v); }
};

// Block-wide reduction (Op is MaxOp or SumOp) through shared memory; every thread gets the
// result. `scratch` holds at least 32 floats; blockDim.x is a multiple of 32.
template <typename Op>
__device__ float block_reduce(float v, float* scratch) {
  const Op warp_op;
  const float identity = Op::identity;
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  v = warp_op(v);
  __syncthreads();  // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : identity;
  return warp_op(v);
}

// Grid-stride bounds with 64-bit indices: tensors here exceed 2^31 elements.
__device__ __forceinline__ int64_t global_thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace sdpa::device

namespace sdpa {

inline constexpr int kElementwiseBlock = 256;

// Enough blocks to fill any GPU; grid-stride loops cover the rest.
inline unsigned elementwise_grid(int64_t n) {
  const int64_t blocks = (n + kElementwiseBlock - 1) / kElementwiseBlock;
  const int64_t cap = int64_t{1} << 16;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > cap ? cap : blocks));
}

}  // namespace sdpa

namespace sdpa::device {

// 16 bytes of T: the widest load a thread can issue.
template <typename T>
struct alignas(16) Pack {
  static constexpr int size = 16 / sizeof(T);
  T v[size];
};

}  // namespace sdpa::device
