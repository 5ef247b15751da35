#include <algorithm>
#include <cmath>

#include "device_math.cuh"
#include "dispatch.cuh"
#include "reference.h"
#include "reference_rows.cuh"

namespace sdpa {
namespace {

using device::block_reduce;
using device::to_float;

constexpr int kMaxHeadDim = 256;

template <typename T>
__global__ void reference_rows_kernel(AttentionShape p, const T* q, const T* k, const T* v,
                                      float* out, float* scratch, int64_t first_row) {
  __shared__ float q_row[kMaxHeadDim];
  __shared__ float partial[kMaxHeadDim * 4];
  __shared__ float red[32];

  const int64_t row = first_row + blockIdx.x;  // row = ((b * Hq) + h) * Sq + i
  const int64_t i = row % p.seq_q;
  const int64_t bh = row / p.seq_q;
  const int64_t b = bh / p.heads;
  const int64_t kv_head = (bh % p.heads) / (p.heads / p.kv_heads);
  const int64_t D = p.head_dim;
  const T* k_base = k + (b * p.kv_heads + kv_head) * p.seq_kv * D;
  const T* v_base = v + (b * p.kv_heads + kv_head) * p.seq_kv * D;
  float* s = scratch + static_cast<int64_t>(blockIdx.x) * p.seq_kv;
  const int64_t visible = p.causal ? min(i + 1, p.seq_kv) : p.seq_kv;

  for (int64_t d = threadIdx.x; d < D; d += blockDim.x) q_row[d] = to_float(q[row * D + d]);
  __syncthreads();

  float local_max = -INFINITY;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    const T* kj = k_base + j * D;
    float dot = 0.f;
    for (int64_t d = 0; d < D; ++d) dot = fmaf(q_row[d], to_float(kj[d]), dot);
    s[j] = dot * p.scale;
    local_max = fmaxf(local_max, s[j]);
  }
  const float row_max = block_reduce<device::MaxOp>(local_max, red);

  float local_sum = 0.f;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    s[j] = expf(s[j] - row_max);
    local_sum += s[j];
  }
  const float inv_sum = 1.f / block_reduce<device::SumOp>(local_sum, red);

  device::weighted_row_sum(s, v_base, visible, D, inv_sum, out + row * D, partial);
}

int64_t total_rows(const AttentionShape& p) { return p.batch * p.heads * p.seq_q; }

}  // namespace

int64_t reference_rows_per_launch(const AttentionShape& shape, int64_t scratch_floats) {
  const int64_t by_scratch = scratch_floats / std::max<int64_t>(shape.seq_kv, 1);
  const int64_t grid_limit = int64_t{1} << 30;
  return std::min({by_scratch, total_rows(shape), grid_limit});
}

cudaError_t launch_reference_attention(DType t, const AttentionShape& shape, const void* q,
                                       const void* k, const void* v, float* out, float* scratch,
                                       int64_t scratch_floats, cudaStream_t s) {
  if (shape.head_dim > kMaxHeadDim) return cudaErrorInvalidValue;
  const int64_t chunk = reference_rows_per_launch(shape, scratch_floats);
  if (chunk < 1) return cudaErrorInvalidValue;
  // At least 4 groups of D threads (D <= 256 keeps this within 1024 threads).
  const int block = static_cast<int>(std::min<int64_t>(1024, std::max<int64_t>(128, 4 * shape.head_dim)));
  const int threads = block - block % 32;
  return dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t first = 0; first < total_rows(shape); first += chunk) {
      const int64_t rows = std::min(chunk, total_rows(shape) - first);
      reference_rows_kernel<T><<<static_cast<unsigned>(rows), threads, 0, s>>>(
          shape, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), out,
          scratch, first);
      if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    }
    return cudaSuccess;
  });
}

}  // namespace sdpa
