#include <algorithm>

#include "dispatch.cuh"
#include "device_math.cuh"
#include "elementwise.h"

namespace sdpa {
namespace {

using device::from_float;
using device::global_thread_index;
using device::grid_stride;
using device::to_float;

using device::Pack;

// 16-byte packs, then the tail of fewer than a pack's elements; buffers are cudaMalloc-aligned.
template <typename T>
__global__ void scale_kernel(const T* in, T* out, int64_t n, float factor) {
  using P = Pack<T>;
  const int64_t packs = n / P::size;
  for (int64_t i = global_thread_index(); i < packs; i += grid_stride()) {
    P p = reinterpret_cast<const P*>(in)[i];
#pragma unroll
    for (int k = 0; k < P::size; ++k) p.v[k] = from_float<T>(to_float(p.v[k]) * factor);
    reinterpret_cast<P*>(out)[i] = p;
  }
  const int64_t tail = packs * P::size + global_thread_index();
  if (tail < n) out[tail] = from_float<T>(to_float(in[tail]) * factor);
}

// data is [slices, mask_elems]; grid.y walks the slices so no element needs a 64-bit modulo.
template <typename T>
__global__ void masked_fill_kernel(T* data, const bool* mask, int64_t slices, int64_t mask_elems,
                                   float value) {
  using P = Pack<T>;
  const T fill = from_float<T>(value);
  const bool packed = mask_elems % P::size == 0;
  const int64_t units = packed ? mask_elems / P::size : mask_elems;
  for (int64_t slice = blockIdx.y; slice < slices; slice += gridDim.y) {
    T* row = data + slice * mask_elems;
    for (int64_t i = global_thread_index(); i < units; i += grid_stride()) {
      if (packed) {
        P p = reinterpret_cast<P*>(row)[i];
        const bool* m = mask + i * P::size;
#pragma unroll
        for (int k = 0; k < P::size; ++k)
          if (m[k]) p.v[k] = fill;
        reinterpret_cast<P*>(row)[i] = p;
      } else if (mask[i]) {
        row[i] = fill;
      }
    }
  }
}

template <typename From, typename To>
__global__ void cast_kernel(const From* in, To* out, int64_t n) {
  for (int64_t i = global_thread_index(); i < n; i += grid_stride())
    out[i] = from_float<To>(to_float(in[i]));
}

template <typename T>
__global__ void mul_kernel(const T* a, const T* b, T* out, int64_t n) {
  for (int64_t i = global_thread_index(); i < n; i += grid_stride())
    out[i] = from_float<T>(to_float(a[i]) * to_float(b[i]));
}

// One 32 x 32 tile a block through shared memory (a column of padding against bank conflicts);
// grid.z walks the matrices.
constexpr int kTransposeTile = 32;
template <typename T>
__global__ void transpose_matrices_kernel(const T* in, T* out, int64_t rows, int64_t cols) {
  __shared__ T tile[kTransposeTile][kTransposeTile + 1];
  const int64_t matrix = static_cast<int64_t>(blockIdx.z) * rows * cols;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * kTransposeTile;
  const int64_t c0 = static_cast<int64_t>(blockIdx.x) * kTransposeTile;
  for (int i = threadIdx.y; i < kTransposeTile; i += blockDim.y) {
    const int64_t r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = in[matrix + r * cols + c];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < kTransposeTile; i += blockDim.y) {
    const int64_t c = c0 + i, r = r0 + threadIdx.x;
    if (r < rows && c < cols) out[matrix + c * rows + r] = tile[threadIdx.x][i];
  }
}

template <typename T>
__global__ void fill_kernel(T* out, int64_t n, T value) {
  for (int64_t i = global_thread_index(); i < n; i += grid_stride()) out[i] = value;
}

__global__ void add_mask_kernel(float* data, const float* mask, int64_t n, int64_t mask_elems) {
  for (int64_t i = global_thread_index(); i < n; i += grid_stride()) data[i] += mask[i % mask_elems];
}

__global__ void equal_kernel(const float* in, bool* out, int64_t n, const float* value_device) {
  const float value = *value_device;
  for (int64_t i = global_thread_index(); i < n; i += grid_stride()) out[i] = in[i] == value;
}

__global__ void where_rows_kernel(const bool* row_cond, const float* if_true_device,
                                  const float* if_false, float* out, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  const float if_true = *if_true_device;
  for (int64_t i = global_thread_index(); i < n; i += grid_stride())
    out[i] = row_cond[i / cols] ? if_true : if_false[i];
}

__global__ void tril_kernel(const bool* in, bool* out, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = global_thread_index(); i < n; i += grid_stride())
    out[i] = (i % cols) <= (i / cols) ? in[i] : false;
}

__global__ void logical_not_kernel(const bool* in, bool* out, int64_t n) {
  for (int64_t i = global_thread_index(); i < n; i += grid_stride()) out[i] = !in[i];
}

__global__ void where_scalar_kernel(const bool* cond, float* out, int64_t n, float if_true,
                                    const float* if_false_device) {
  const float if_false = *if_false_device;
  for (int64_t i = global_thread_index(); i < n; i += grid_stride())
    out[i] = cond[i] ? if_true : if_false;
}

__global__ void causal_mask_kernel(bool* masked, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = global_thread_index(); i < n; i += grid_stride())
    masked[i] = (i % cols) > (i / cols);
}

}  // namespace

#define SDPA_ELEMENTWISE(kernel, n) kernel<<<elementwise_grid(n), kElementwiseBlock, 0, s>>>

cudaError_t launch_scale(DType t, const void* in, void* out, int64_t n, float factor,
                         cudaStream_t s) {
  dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SDPA_ELEMENTWISE(scale_kernel<T>, (n + 7) / 8)(static_cast<const T*>(in), static_cast<T*>(out), n, factor);
  });
  return cudaGetLastError();
}

cudaError_t launch_masked_fill(DType t, void* data, const bool* mask, int64_t n,
                               int64_t mask_elems, float value, cudaStream_t s) {
  const int64_t slices = n / mask_elems;
  const dim3 grid(elementwise_grid((mask_elems + 7) / 8),
                  static_cast<unsigned>(std::min<int64_t>(slices, 65535)));
  dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    masked_fill_kernel<T><<<grid, kElementwiseBlock, 0, s>>>(static_cast<T*>(data), mask, slices,
                                                             mask_elems, value);
  });
  return cudaGetLastError();
}

cudaError_t launch_cast_to_float(DType t, const void* in, float* out, int64_t n, cudaStream_t s) {
  dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SDPA_ELEMENTWISE((cast_kernel<T, float>), n)(static_cast<const T*>(in), out, n);
  });
  return cudaGetLastError();
}

cudaError_t launch_cast_from_float(DType t, const float* in, void* out, int64_t n,
                                   cudaStream_t s) {
  dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SDPA_ELEMENTWISE((cast_kernel<float, T>), n)(in, static_cast<T*>(out), n);
  });
  return cudaGetLastError();
}

cudaError_t launch_mul(DType t, const void* a, const void* b, void* out, int64_t n, cudaStream_t s) {
  dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SDPA_ELEMENTWISE(mul_kernel<T>, n)(static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out), n);
  });
  return cudaGetLastError();
}

cudaError_t launch_mul_float(const float* a, const float* b, float* out, int64_t n, cudaStream_t s) {
  SDPA_ELEMENTWISE(mul_kernel<float>, n)(a, b, out, n);
  return cudaGetLastError();
}

cudaError_t launch_transpose_matrices(DType t, const void* in, void* out, int64_t matrices,
                                      int64_t rows, int64_t cols, cudaStream_t s) {
  if (matrices <= 0 || rows <= 0 || cols <= 0) return cudaSuccess;
  if (matrices > 65535) return cudaErrorInvalidValue;  // grid.z
  const dim3 grid(static_cast<unsigned>((cols + kTransposeTile - 1) / kTransposeTile),
                  static_cast<unsigned>((rows + kTransposeTile - 1) / kTransposeTile),
                  static_cast<unsigned>(matrices));
  const dim3 block(kTransposeTile, 8);
  dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    transpose_matrices_kernel<T><<<grid, block, 0, s>>>(static_cast<const T*>(in), static_cast<T*>(out), rows, cols);
  });
  return cudaGetLastError();
}

cudaError_t launch_scale_float(const float* in, float* out, int64_t n, float factor,
                               cudaStream_t s) {
  SDPA_ELEMENTWISE(scale_kernel<float>, (n + 3) / 4)(in, out, n, factor);
  return cudaGetLastError();
}

cudaError_t launch_fill_float(float* out, int64_t n, float value, cudaStream_t s) {
  SDPA_ELEMENTWISE(fill_kernel<float>, n)(out, n, value);
  return cudaGetLastError();
}

cudaError_t launch_add_mask_float(float* data, const float* mask, int64_t n, int64_t mask_elems,
                                  cudaStream_t s) {
  SDPA_ELEMENTWISE(add_mask_kernel, n)(data, mask, n, mask_elems);
  return cudaGetLastError();
}

cudaError_t launch_equal_float(const float* in, bool* out, int64_t n, const float* value_device,
                               cudaStream_t s) {
  SDPA_ELEMENTWISE(equal_kernel, n)(in, out, n, value_device);
  return cudaGetLastError();
}

cudaError_t launch_where_rows_float(const bool* row_cond, const float* if_true_device,
                                    const float* if_false, float* out, int64_t rows, int64_t cols,
                                    cudaStream_t s) {
  SDPA_ELEMENTWISE(where_rows_kernel, rows * cols)(row_cond, if_true_device, if_false, out, rows, cols);
  return cudaGetLastError();
}

cudaError_t launch_fill_bool(bool* out, int64_t n, bool value, cudaStream_t s) {
  SDPA_ELEMENTWISE(fill_kernel<bool>, n)(out, n, value);
  return cudaGetLastError();
}

cudaError_t launch_tril_bool(const bool* in, bool* out, int64_t rows, int64_t cols,
                             cudaStream_t s) {
  SDPA_ELEMENTWISE(tril_kernel, rows * cols)(in, out, rows, cols);
  return cudaGetLastError();
}

cudaError_t launch_logical_not(const bool* in, bool* out, int64_t n, cudaStream_t s) {
  SDPA_ELEMENTWISE(logical_not_kernel, n)(in, out, n);
  return cudaGetLastError();
}

cudaError_t launch_where_scalar_float(const bool* cond, float* out, int64_t n, float if_true,
                                      const float* if_false_device, cudaStream_t s) {
  SDPA_ELEMENTWISE(where_scalar_kernel, n)(cond, out, n, if_true, if_false_device);
  return cudaGetLastError();
}

cudaError_t launch_causal_mask(bool* masked, int64_t rows, int64_t cols, cudaStream_t s) {
  SDPA_ELEMENTWISE(causal_mask_kernel, rows * cols)(masked, rows, cols);
  return cudaGetLastError();
}

#undef SDPA_ELEMENTWISE

}  // namespace sdpa
