#include <cmath>

#include "compare.h"
#include "device_math.cuh"
#include "dispatch.cuh"

namespace sdpa {
namespace {

using device::block_reduce;
using device::global_thread_index;
using device::grid_stride;
using device::to_float;

template <typename T>
__global__ void compare_kernel(const T* out, const float* ref, int64_t n, ErrorSums* sums) {
  __shared__ float red[32];
  __shared__ unsigned bad_in_block;
  if (threadIdx.x == 0) bad_in_block = 0;
  __syncthreads();
  double sq_err = 0.0;
  double sq_ref = 0.0;
  float max_err = 0.f;
  float max_ref = 0.f;
  unsigned bad = 0;
  for (int64_t i = global_thread_index(); i < n; i += grid_stride()) {
    const float o = to_float(out[i]);
    const float r = ref[i];
    sq_ref += static_cast<double>(r) * r;
    max_ref = fmaxf(max_ref, fabsf(r));
    if (!isfinite(o)) {
      ++bad;
      continue;
    }
    const float e = fabsf(o - r);
    sq_err += static_cast<double>(e) * e;
    max_err = fmaxf(max_err, e);
  }
  // Block partial sums in float are precise enough for an error ratio; the grid total is double.
  const float block_err = block_reduce<device::SumOp>(static_cast<float>(sq_err), red);
  const float block_ref = block_reduce<device::SumOp>(static_cast<float>(sq_ref), red);
  const float block_max = block_reduce<device::MaxOp>(max_err, red);
  const float block_max_ref = block_reduce<device::MaxOp>(max_ref, red);
  if (bad != 0) atomicAdd(&bad_in_block, bad);
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(&sums->squared_error, static_cast<double>(block_err));
    atomicAdd(&sums->squared_reference, static_cast<double>(block_ref));
    // Non-negative floats order as their bit patterns do.
    atomicMax(reinterpret_cast<unsigned*>(&sums->max_abs_error), __float_as_uint(block_max));
    atomicMax(reinterpret_cast<unsigned*>(&sums->max_abs_reference), __float_as_uint(block_max_ref));
    if (bad_in_block != 0) atomicAdd(&sums->non_finite, static_cast<unsigned long long>(bad_in_block));
  }
}

}  // namespace

cudaError_t launch_compare(DType t, const void* out, const float* ref, int64_t n, ErrorSums* sums,
                           cudaStream_t s) {
  if (const cudaError_t err = cudaMemsetAsync(sums, 0, sizeof(ErrorSums), s); err != cudaSuccess)
    return err;
  dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    compare_kernel<T><<<elementwise_grid(n), kElementwiseBlock, 0, s>>>(static_cast<const T*>(out), ref, n, sums);
  });
  return cudaGetLastError();
}

}  // namespace sdpa
