#include <algorithm>
#include <cmath>

#include "device_math.cuh"
#include "dispatch.cuh"
#include "int32_pieces.h"
#include "softmax.h"

namespace sdpa {
namespace {

using device::block_reduce;
using device::from_float;
using device::to_float;

constexpr int kRowBlock = 256;

// One block per row; three passes (max, sum, write) read the row from L1/L2 after the first.
template <typename T>
__global__ void __launch_bounds__(kRowBlock) softmax_rows_kernel(const T* in, T* out, int64_t cols) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  const T* x = in + row * cols;
  T* y = out + row * cols;

  float local_max = -INFINITY;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) local_max = fmaxf(local_max, to_float(x[c]));
  const float row_max = block_reduce<device::MaxOp>(local_max, scratch);

  float local_sum = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) local_sum += __expf(to_float(x[c]) - row_max);
  const float inv_sum = 1.f / block_reduce<device::SumOp>(local_sum, scratch);

  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    y[c] = from_float<T>(__expf(to_float(x[c]) - row_max) * inv_sum);
}

__global__ void __launch_bounds__(kRowBlock) all_rows_kernel(const bool* in, bool* out, int64_t cols) {
  const int64_t row = blockIdx.x;
  const bool* x = in + row * cols;
  int all_true = 1;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) all_true &= x[c] ? 1 : 0;
  all_true = __syncthreads_and(all_true);
  if (threadIdx.x == 0) out[row] = all_true != 0;
}

// Rows that fit in registers (PACKS 16-byte packs per thread) are read once and written once.
template <typename T, int PACKS>
__global__ void __launch_bounds__(kRowBlock) softmax_rows_in_registers_kernel(const T* in, T* out, int64_t cols) {
  using P = device::Pack<T>;
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  const P* x = reinterpret_cast<const P*>(in + row * cols);
  P* y = reinterpret_cast<P*>(out + row * cols);
  const int64_t packs = cols / P::size;

  P cache[PACKS];
  float local_max = -INFINITY;
#pragma unroll
  for (int u = 0; u < PACKS; ++u) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(u) * blockDim.x;
    if (i < packs) {
      cache[u] = x[i];
#pragma unroll
      for (int k = 0; k < P::size; ++k) local_max = fmaxf(local_max, to_float(cache[u].v[k]));
    }
  }
  const float row_max = block_reduce<device::MaxOp>(local_max, scratch);

  float local_sum = 0.f;
#pragma unroll
  for (int u = 0; u < PACKS; ++u) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(u) * blockDim.x;
    if (i < packs) {
#pragma unroll
      for (int k = 0; k < P::size; ++k) local_sum += __expf(to_float(cache[u].v[k]) - row_max);
    }
  }
  const float inv_sum = 1.f / block_reduce<device::SumOp>(local_sum, scratch);

#pragma unroll
  for (int u = 0; u < PACKS; ++u) {
    const int64_t i = threadIdx.x + static_cast<int64_t>(u) * blockDim.x;
    if (i < packs) {
      P p;
#pragma unroll
      for (int k = 0; k < P::size; ++k) p.v[k] = from_float<T>(__expf(to_float(cache[u].v[k]) - row_max) * inv_sum);
      y[i] = p;
    }
  }
}

// Small rows waste most of a 256-thread block; 32 threads still cover them.
int row_block_for(int64_t cols) { return cols <= 256 ? 32 : kRowBlock; }

template <typename T>
cudaError_t launch_softmax(const T* in, T* out, int64_t rows, int64_t cols, cudaStream_t s) {
  if (rows <= 0) return cudaSuccess;
  constexpr int64_t pack = device::Pack<T>::size;
  const auto grid = static_cast<unsigned>(rows);
  if (cols % pack == 0 && cols <= 4 * pack * kRowBlock) {
    const int64_t packs = cols / pack;
    const int per_thread = packs <= kRowBlock ? 1 : (packs <= 2 * kRowBlock ? 2 : 4);
    const int64_t threads = (packs + per_thread - 1) / per_thread;
    const int block = static_cast<int>(std::max<int64_t>(32, (threads + 31) / 32 * 32));
    if (per_thread == 1) softmax_rows_in_registers_kernel<T, 1><<<grid, block, 0, s>>>(in, out, cols);
    if (per_thread == 2) softmax_rows_in_registers_kernel<T, 2><<<grid, block, 0, s>>>(in, out, cols);
    if (per_thread == 4) softmax_rows_in_registers_kernel<T, 4><<<grid, block, 0, s>>>(in, out, cols);
  } else {
    softmax_rows_kernel<T><<<grid, row_block_for(cols), 0, s>>>(in, out, cols);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_softmax_rows(DType t, const void* in, void* out, int64_t rows, int64_t cols,
                                cudaStream_t s) {
  return dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launch_softmax(static_cast<const T*>(in), static_cast<T*>(out), rows, cols, s);
  });
}

cudaError_t launch_softmax_rows_float(const float* in, float* out, int64_t rows, int64_t cols,
                                      cudaStream_t s) {
  return launch_softmax(in, out, rows, cols, s);
}

// A reduction of PyTorch's TensorIterator: split in whole rows where the input's byte offsets pass
// int32, as its elementwise ops are (int32_pieces.h).
cudaError_t launch_all_rows(const bool* in, bool* out, int64_t rows, int64_t cols, cudaStream_t s) {
  if (rows < 1 || cols < 1) return cudaGetLastError();
  for (const Int32Piece& p : int32_pieces(rows * cols, sizeof(bool), cols))
    all_rows_kernel<<<static_cast<unsigned>(p.count / cols), row_block_for(cols), 0, s>>>(
        in + p.begin, out + p.begin / cols, cols);
  return cudaGetLastError();
}

}  // namespace sdpa
