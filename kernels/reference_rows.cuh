// What the reference kernels (forward and backward) share: one output row as a weighted sum of a
// tensor's rows, computed by a whole block.
#pragma once

#include <cstdint>

#include "device_math.cuh"

namespace sdpa::device {

// out[d] = factor * sum over j < count of weight[j] * rows[j * D + d], for d < D (D <= blockDim.x).
// The threads split into blockDim.x / D groups of D, each summing a strided share of the rows in
// exact order, then one thread per d sums the groups. `partial`: shared memory of blockDim.x
// floats. Every thread of the block must call it; `weight` may have been written just before.
template <typename T>
__device__ void weighted_row_sum(const float* weight, const T* rows, int64_t count, int64_t D,
                                 float factor, float* out, float* partial) {
  __syncthreads();  // weight written by other threads
  const int groups = static_cast<int>(blockDim.x / D);
  const int d = static_cast<int>(threadIdx.x % D);
  const int g = static_cast<int>(threadIdx.x / D);
  if (g < groups) {
    float acc = 0.f;
    for (int64_t j = g; j < count; j += groups) acc = fmaf(weight[j], to_float(rows[j * D + d]), acc);
    partial[g * D + d] = acc;
  }
  __syncthreads();
  for (int64_t dd = threadIdx.x; dd < D; dd += blockDim.x) {
    float acc = 0.f;
    for (int gg = 0; gg < groups; ++gg) acc += partial[gg * D + dd];
    out[dd] = acc * factor;
  }
}

}  // namespace sdpa::device
