#include "device_math.cuh"
#include "dispatch.cuh"
#include "flash_bwd.h"
#include "flash_traits.cuh"

namespace sdpa {
namespace {

using device::from_float;
using device::to_float;
using device::warp_sum;

// One warp per row: delta = rowsum(dO * O) in fp32, and the row's dQ accumulator zeroed.
template <typename T>
__global__ void flash_bwd_preprocess_kernel(const T* d_out, const T* o, float* delta, float* dq_accum,
                                            int64_t rows, int head_dim) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows) return;
  const int lane = static_cast<int>(threadIdx.x % 32);
  float acc = 0.f;
  for (int d = lane; d < head_dim; d += 32) {
    acc += to_float(d_out[row * head_dim + d]) * to_float(o[row * head_dim + d]);
    dq_accum[row * head_dim + d] = 0.f;
  }
  acc = warp_sum(acc);
  if (lane == 0) delta[row] = acc;
}

template <typename T>
__global__ void flash_bwd_convert_dq_kernel(const float* dq_accum, T* dq, int64_t n, float scale) {
  for (int64_t i = device::global_thread_index(); i < n; i += device::grid_stride())
    dq[i] = from_float<T>(dq_accum[i] * scale);
}

constexpr int kRowsPerBlock = 8;  // warps per preprocess block

}  // namespace

cudaError_t launch_flash_backward(const FusedBackward& b) {
  // Without the forward's statistics or the workspace there is nothing to read or accumulate into.
  if (b.lse == nullptr || b.workspace == nullptr) return cudaErrorInvalidValue;
  const AttentionShape& s = b.shape;
  const int64_t rows = s.batch * s.heads * s.seq_q;
  float* delta = b.workspace;
  float* dq_accum = b.workspace + rows;
  return dispatch_dtype(b.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    flash_bwd_preprocess_kernel<T><<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock),
                                     kRowsPerBlock * 32, 0, b.stream>>>(
        static_cast<const T*>(b.d_out), static_cast<const T*>(b.o), delta, dq_accum, rows,
        static_cast<int>(s.head_dim));
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
    const cudaError_t main = dispatch_int(flash::FlashHeadDims{}, s.head_dim, cudaErrorInvalidValue, [&](auto d) {
      return flash::launch_flash_backward_main<decltype(d)::value>(b, delta, dq_accum);
    });
    if (main != cudaSuccess) return main;
    return launch_flash_backward_convert_dq(b, dq_accum);
  });
}

int flash_backward_smem_bytes(int64_t head_dim) {
  return dispatch_int(flash::FlashHeadDims{}, head_dim, 0,
                      [](auto d) { return flash::backward_main_smem_bytes<decltype(d)::value>(); });
}

cudaError_t launch_flash_backward_convert_dq(const FusedBackward& b, const float* dq_accum) {
  const int64_t n = b.shape.batch * b.shape.heads * b.shape.seq_q * b.shape.head_dim;
  return dispatch_dtype(b.dtype, [&](auto type) {
    using T = typename decltype(type)::type;
    flash_bwd_convert_dq_kernel<T><<<elementwise_grid(n), kElementwiseBlock, 0, b.stream>>>(
        dq_accum, static_cast<T*>(b.dq), n, b.shape.scale);
    return cudaGetLastError();
  });
}

}  // namespace sdpa
