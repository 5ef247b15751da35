#include <algorithm>
#include <cmath>

#include "device_math.cuh"
#include "dispatch.cuh"
#include "reference.h"
#include "reference_backward.h"
#include "reference_rows.cuh"

namespace sdpa {
namespace {

using device::block_reduce;
using device::to_float;

constexpr int kMaxHeadDim = 256;
constexpr int kMaxThreads = 1024;
constexpr int64_t kGridLimit = int64_t{1} << 30;

template <typename T>
__device__ float dot_row(const float* a, const T* b, int64_t n) {
  float acc = 0.f;
  for (int64_t d = 0; d < n; ++d) acc = fmaf(a[d], to_float(b[d]), acc);
  return acc;
}

// dQ of one query row, and that row's log-sum-exp and delta = rowsum(dO * O) = sum_j P_j dP_j.
template <typename T>
__global__ void reference_query_grads_kernel(AttentionShape p, const T* q, const T* k, const T* v,
                                             const T* d_out, float* dq, float* row_stats,
                                             float* scratch, int64_t first_row) {
  __shared__ float q_row[kMaxHeadDim];
  __shared__ float do_row[kMaxHeadDim];
  __shared__ float partial[kMaxHeadDim * 4];
  __shared__ float red[32];

  const int64_t rows = p.batch * p.heads * p.seq_q;
  const int64_t row = first_row + blockIdx.x;  // ((b * Hq) + h) * Sq + i
  const int64_t i = row % p.seq_q;
  const int64_t bh = row / p.seq_q;
  const int64_t b = bh / p.heads;
  const int64_t kv_head = (bh % p.heads) / (p.heads / p.kv_heads);
  const int64_t D = p.head_dim;
  const T* k_base = k + (b * p.kv_heads + kv_head) * p.seq_kv * D;
  const T* v_base = v + (b * p.kv_heads + kv_head) * p.seq_kv * D;
  float* s = scratch + static_cast<int64_t>(blockIdx.x) * p.seq_kv;
  const int64_t visible = p.causal ? min(i + 1, p.seq_kv) : p.seq_kv;

  for (int64_t d = threadIdx.x; d < D; d += blockDim.x) {
    q_row[d] = to_float(q[row * D + d]);
    do_row[d] = to_float(d_out[row * D + d]);
  }
  __syncthreads();

  float local_max = -INFINITY;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    s[j] = dot_row(q_row, k_base + j * D, D) * p.scale;
    local_max = fmaxf(local_max, s[j]);
  }
  const float row_max = block_reduce<device::MaxOp>(local_max, red);
  float local_sum = 0.f;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    s[j] = expf(s[j] - row_max);
    local_sum += s[j];
  }
  const float sum = block_reduce<device::SumOp>(local_sum, red);
  float local_delta = 0.f;
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    s[j] /= sum;
    local_delta += s[j] * dot_row(do_row, v_base + j * D, D);
  }
  const float delta = block_reduce<device::SumOp>(local_delta, red);
  // dS_j = P_j (dP_j - delta), dP recomputed rather than staged in a second scratch row.
  for (int64_t j = threadIdx.x; j < visible; j += blockDim.x)
    s[j] *= dot_row(do_row, v_base + j * D, D) - delta;
  device::weighted_row_sum(s, k_base, visible, D, p.scale, dq + row * D, partial);
  if (threadIdx.x == 0) {
    row_stats[row] = row_max + logf(sum);
    row_stats[rows + row] = delta;
  }
}

// dK and dV of one key row, over every query row of its group's heads that sees it.
template <typename T>
__global__ void reference_key_grads_kernel(AttentionShape p, const T* q, const T* k, const T* v,
                                           const T* d_out, const float* row_stats, float* dk,
                                           float* dv, int64_t first_key) {
  __shared__ float k_row[kMaxHeadDim];
  __shared__ float v_row[kMaxHeadDim];
  __shared__ float prob[kMaxThreads];
  __shared__ float d_score[kMaxThreads];
  __shared__ float partial_k[kMaxThreads];
  __shared__ float partial_v[kMaxThreads];

  const int64_t rows = p.batch * p.heads * p.seq_q;
  const int64_t key = first_key + blockIdx.x;  // ((b * Hkv) + kv_head) * Skv + j
  const int64_t j = key % p.seq_kv;
  const int64_t b_kv = key / p.seq_kv;
  const int64_t b = b_kv / p.kv_heads;
  const int64_t group = p.heads / p.kv_heads;
  const int64_t first_head = (b_kv % p.kv_heads) * group;
  const int64_t D = p.head_dim;
  // Top-left causal: query i sees key j when j <= i.
  const int64_t first_query = p.causal ? j : 0;
  const int64_t queries = max(p.seq_q - first_query, int64_t{0});
  const int64_t seeing = group * queries;  // (head, query) rows that see this key

  for (int64_t d = threadIdx.x; d < D; d += blockDim.x) {
    k_row[d] = to_float(k[key * D + d]);
    v_row[d] = to_float(v[key * D + d]);
  }
  const int groups = static_cast<int>(blockDim.x / D);
  const int d = static_cast<int>(threadIdx.x % D);
  const int g = static_cast<int>(threadIdx.x / D);
  float acc_k = 0.f;
  float acc_v = 0.f;
  const auto query_row = [&](int64_t r) {  // r-th row seeing the key -> row of Q, dO
    return (b * p.heads + first_head + r / queries) * p.seq_q + first_query + r % queries;
  };
  for (int64_t chunk = 0; chunk < seeing; chunk += blockDim.x) {
    __syncthreads();  // k_row and v_row written; the previous chunk's coefficients read
    const int64_t r = chunk + threadIdx.x;
    float pr = 0.f;
    float ds = 0.f;
    if (r < seeing) {
      const int64_t row = query_row(r);
      pr = expf(dot_row(k_row, q + row * D, D) * p.scale - row_stats[row]);
      ds = pr * (dot_row(v_row, d_out + row * D, D) - row_stats[rows + row]);
    }
    prob[threadIdx.x] = pr;
    d_score[threadIdx.x] = ds;
    __syncthreads();
    if (g < groups) {
      const int64_t in_chunk = min(static_cast<int64_t>(blockDim.x), seeing - chunk);
      for (int64_t t = g; t < in_chunk; t += groups) {
        const int64_t row = query_row(chunk + t);
        acc_v = fmaf(prob[t], to_float(d_out[row * D + d]), acc_v);
        acc_k = fmaf(d_score[t], to_float(q[row * D + d]), acc_k);
      }
    }
  }
  __syncthreads();
  if (g < groups) {
    partial_k[g * D + d] = acc_k;
    partial_v[g * D + d] = acc_v;
  }
  __syncthreads();
  for (int64_t dd = threadIdx.x; dd < D; dd += blockDim.x) {
    float sum_k = 0.f;
    float sum_v = 0.f;
    for (int gg = 0; gg < groups; ++gg) {
      sum_k += partial_k[gg * D + dd];
      sum_v += partial_v[gg * D + dd];
    }
    dk[key * D + dd] = sum_k * p.scale;
    dv[key * D + dd] = sum_v;
  }
}

// At least 4 groups of D threads (D <= 256 keeps this within 1024 threads), whole warps.
int threads_for(const AttentionShape& shape) {
  const int block = static_cast<int>(std::min<int64_t>(kMaxThreads, std::max<int64_t>(128, 4 * shape.head_dim)));
  return block - block % 32;
}

}  // namespace

int64_t reference_backward_row_stats_floats(const AttentionShape& shape) {
  return 2 * shape.batch * shape.heads * shape.seq_q;
}

cudaError_t launch_reference_attention_backward(DType t, const AttentionShape& shape, const void* q,
                                                const void* k, const void* v, const void* d_out,
                                                float* dq, float* dk, float* dv, float* row_stats,
                                                float* scratch, int64_t scratch_floats, cudaStream_t s) {
  if (shape.head_dim > kMaxHeadDim) return cudaErrorInvalidValue;
  const int64_t chunk = reference_rows_per_launch(shape, scratch_floats);
  if (chunk < 1) return cudaErrorInvalidValue;
  const int threads = threads_for(shape);
  const int64_t query_rows = shape.batch * shape.heads * shape.seq_q;
  const int64_t key_rows = shape.batch * shape.kv_heads * shape.seq_kv;
  return dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* q_t = static_cast<const T*>(q);
    const T* k_t = static_cast<const T*>(k);
    const T* v_t = static_cast<const T*>(v);
    const T* do_t = static_cast<const T*>(d_out);
    for (int64_t first = 0; first < query_rows; first += chunk) {
      const int64_t blocks = std::min(chunk, query_rows - first);
      reference_query_grads_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, s>>>(
          shape, q_t, k_t, v_t, do_t, dq, row_stats, scratch, first);
      if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    }
    for (int64_t first = 0; first < key_rows; first += kGridLimit) {
      const int64_t blocks = std::min(kGridLimit, key_rows - first);
      reference_key_grads_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, s>>>(
          shape, q_t, k_t, v_t, do_t, row_stats, dk, dv, first);
      if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    }
    return cudaSuccess;
  });
}

}  // namespace sdpa
