#include <algorithm>
#include <cstdint>
#include <vector>

#include "device_math.cuh"
#include "dispatch.cuh"
#include "elementwise.h"
#include "int32_pieces.h"

namespace sdpa {
namespace {

using device::from_float;
using device::global_thread_index;
using device::grid_stride;
using device::to_float;

using device::Pack;

// 16-byte packs need 16-byte-aligned pointers. Buffers are cudaMalloc-aligned, but a piece of an
// op split past int32 offsets (int32_pieces.h) may start mid-pack: its elements then go one by one,
// as PyTorch's vectorized loads narrow to what its operands' alignment allows.
__device__ __forceinline__ bool aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// 16-byte packs, then the elements past the last whole pack.
template <typename T>
__global__ void scale_kernel(const T* in, T* out, int64_t n, float factor) {
  using P = Pack<T>;
  const int64_t packs = aligned16(in) && aligned16(out) ? n / P::size : 0;
  for (int64_t i = global_thread_index(); i < packs; i += grid_stride()) {
    P p = reinterpret_cast<const P*>(in)[i];
#pragma unroll
    for (int k = 0; k < P::size; ++k) p.v[k] = from_float<T>(to_float(p.v[k]) * factor);
    reinterpret_cast<P*>(out)[i] = p;
  }
  for (int64_t i = packs * P::size + global_thread_index(); i < n; i += grid_stride())
    out[i] = from_float<T>(to_float(in[i]) * factor);
}

// data is [slices, mask_elems]; grid.y walks the slices so no element needs a 64-bit modulo.
template <typename T>
__global__ void masked_fill_kernel(T* data, const bool* mask, int64_t slices, int64_t mask_elems,
                                   float value) {
  using P = Pack<T>;
  const T fill = from_float<T>(value);
  const bool packed = mask_elems % P::size == 0 && aligned16(data);
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

// `first`: the index of data[0] in the whole tensor, which the mask's index follows.
__global__ void add_mask_kernel(float* data, const float* mask, int64_t n, int64_t mask_elems,
                                int64_t first) {
  for (int64_t i = global_thread_index(); i < n; i += grid_stride())
    data[i] += mask[(first + i) % mask_elems];
}

__global__ void isneginf_kernel(const float* in, bool* out, int64_t n) {
  for (int64_t i = global_thread_index(); i < n; i += grid_stride()) out[i] = in[i] == -INFINITY;
}

// `first`: the index of out[0] in the whole tensor, whose row picks the condition.
__global__ void where_rows_kernel(const bool* row_cond, const float* if_true_device,
                                  const float* if_false, float* out, int64_t n, int64_t cols,
                                  int64_t first) {
  const float if_true = *if_true_device;
  for (int64_t i = global_thread_index(); i < n; i += grid_stride())
    out[i] = row_cond[(first + i) / cols] ? if_true : if_false[i];
}

__global__ void tril_kernel(const bool* in, bool* out, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = global_thread_index(); i < n; i += grid_stride())
    out[i] = (i % cols) <= (i / cols) ? in[i] : false;
}

__global__ void where_scalar_kernel(const bool* cond, float* out, int64_t n,
                                    const float* if_true_device, const float* if_false_device) {
  const float if_true = *if_true_device;
  const float if_false = *if_false_device;
  for (int64_t i = global_thread_index(); i < n; i += grid_stride())
    out[i] = cond[i] ? if_true : if_false;
}

__global__ void causal_mask_kernel(bool* masked, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  for (int64_t i = global_thread_index(); i < n; i += grid_stride())
    masked[i] = (i % cols) > (i / cols);
}

// The launchers of PyTorch's TensorIterator ops run one kernel a piece (int32_pieces.h: one piece
// unless an operand's byte offsets pass int32); `launch(begin, count)` enqueues a piece's kernel.
template <typename Launch>
cudaError_t launch_pieces(const std::vector<Int32Piece>& pieces, Launch&& launch) {
  for (const Int32Piece& p : pieces) launch(p.begin, p.count);
  return cudaGetLastError();
}

}  // namespace

// `kernel`, with a grid for `n` units of work, on the launcher's stream `s`.
#define SDPA_ELEMENTWISE(kernel, n, ...) \
  kernel<<<elementwise_grid(n), kElementwiseBlock, 0, s>>>(__VA_ARGS__)

cudaError_t launch_scale(DType t, const void* in, void* out, int64_t n, float factor,
                         cudaStream_t s) {
  return dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* src = static_cast<const T*>(in);
    auto* dst = static_cast<T*>(out);
    return launch_pieces(int32_pieces(n, sizeof(T)), [&](int64_t begin, int64_t count) {
      SDPA_ELEMENTWISE(scale_kernel<T>, (count + 7) / 8, src + begin, dst + begin, count, factor);
    });
  });
}

// The mask is broadcast over the slices: a piece is whole slices, or part of one slice (a slice of
// its own, against the mask from the piece's place in its slice).
cudaError_t launch_masked_fill(DType t, void* data, const bool* mask, int64_t n,
                               int64_t mask_elems, float value, cudaStream_t s) {
  return dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto pieces = int32_pieces(n, sizeof(T), mask_elems);
    return launch_pieces(pieces, [&](int64_t begin, int64_t count) {
      const bool within_slice = count < mask_elems;
      const int64_t slices = within_slice ? 1 : count / mask_elems;
      const int64_t slice_elems = within_slice ? count : mask_elems;
      const dim3 grid(elementwise_grid((slice_elems + 7) / 8),
                      static_cast<unsigned>(std::min<int64_t>(slices, 65535)));
      masked_fill_kernel<T><<<grid, kElementwiseBlock, 0, s>>>(
          static_cast<T*>(data) + begin, mask + begin % mask_elems, slices, slice_elems, value);
    });
  });
}

cudaError_t launch_cast_to_float(DType t, const void* in, float* out, int64_t n, cudaStream_t s) {
  return dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* src = static_cast<const T*>(in);
    return launch_pieces(int32_pieces(n, sizeof(float)), [&](int64_t begin, int64_t count) {
      SDPA_ELEMENTWISE((cast_kernel<T, float>), count, src + begin, out + begin, count);
    });
  });
}

cudaError_t launch_cast_from_float(DType t, const float* in, void* out, int64_t n,
                                   cudaStream_t s) {
  return dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto* dst = static_cast<T*>(out);
    return launch_pieces(int32_pieces(n, sizeof(float)), [&](int64_t begin, int64_t count) {
      SDPA_ELEMENTWISE((cast_kernel<float, T>), count, in + begin, dst + begin, count);
    });
  });
}

cudaError_t launch_mul(DType t, const void* a, const void* b, void* out, int64_t n, cudaStream_t s) {
  return dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto* x = static_cast<const T*>(a);
    const auto* y = static_cast<const T*>(b);
    auto* dst = static_cast<T*>(out);
    return launch_pieces(int32_pieces(n, sizeof(T)), [&](int64_t begin, int64_t count) {
      SDPA_ELEMENTWISE(mul_kernel<T>, count, x + begin, y + begin, dst + begin, count);
    });
  });
}

cudaError_t launch_mul_float(const float* a, const float* b, float* out, int64_t n, cudaStream_t s) {
  return launch_pieces(int32_pieces(n, sizeof(float)), [&](int64_t begin, int64_t count) {
    SDPA_ELEMENTWISE(mul_kernel<float>, count, a + begin, b + begin, out + begin, count);
  });
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
  return launch_pieces(int32_pieces(n, sizeof(float)), [&](int64_t begin, int64_t count) {
    SDPA_ELEMENTWISE(scale_kernel<float>, (count + 3) / 4, in + begin, out + begin, count, factor);
  });
}

cudaError_t launch_fill_float(float* out, int64_t n, float value, cudaStream_t s) {
  return launch_pieces(int32_pieces(n, sizeof(float)), [&](int64_t begin, int64_t count) {
    SDPA_ELEMENTWISE(fill_kernel<float>, count, out + begin, count, value);
  });
}

// The mask is broadcast over the slices, as masked_fill's.
cudaError_t launch_add_mask_float(float* data, const float* mask, int64_t n, int64_t mask_elems,
                                  cudaStream_t s) {
  const auto pieces = int32_pieces(n, sizeof(float), mask_elems);
  return launch_pieces(pieces, [&](int64_t begin, int64_t count) {
    SDPA_ELEMENTWISE(add_mask_kernel, count, data + begin, mask, count, mask_elems, begin);
  });
}

cudaError_t launch_isneginf_float(const float* in, bool* out, int64_t n, cudaStream_t s) {
  return launch_pieces(int32_pieces(n, sizeof(float)), [&](int64_t begin, int64_t count) {
    SDPA_ELEMENTWISE(isneginf_kernel, count, in + begin, out + begin, count);
  });
}

// row_cond is broadcast along each row: the rows are split first, as masked_fill's slices.
cudaError_t launch_where_rows_float(const bool* row_cond, const float* if_true_device,
                                    const float* if_false, float* out, int64_t rows, int64_t cols,
                                    cudaStream_t s) {
  const auto pieces = int32_pieces(rows * cols, sizeof(float), cols);
  return launch_pieces(pieces, [&](int64_t begin, int64_t count) {
    SDPA_ELEMENTWISE(where_rows_kernel, count, row_cond, if_true_device, if_false + begin,
                     out + begin, count, cols, begin);
  });
}

cudaError_t launch_fill_bool(bool* out, int64_t n, bool value, cudaStream_t s) {
  return launch_pieces(int32_pieces(n, sizeof(bool)), [&](int64_t begin, int64_t count) {
    SDPA_ELEMENTWISE(fill_kernel<bool>, count, out + begin, count, value);
  });
}

// PyTorch's tril is a kernel of its own with 64-bit indices: one launch.
cudaError_t launch_tril_bool(const bool* in, bool* out, int64_t rows, int64_t cols,
                             cudaStream_t s) {
  SDPA_ELEMENTWISE(tril_kernel, rows * cols, in, out, rows, cols);
  return cudaGetLastError();
}

cudaError_t launch_where_scalar_float(const bool* cond, float* out, int64_t n,
                                      const float* if_true_device, const float* if_false_device,
                                      cudaStream_t s) {
  return launch_pieces(int32_pieces(n, sizeof(float)), [&](int64_t begin, int64_t count) {
    SDPA_ELEMENTWISE(where_scalar_kernel, count, cond + begin, out + begin, count, if_true_device,
                     if_false_device);
  });
}

// Ours alone (the naive backends' input mask, built once in prepare()): one launch.
cudaError_t launch_causal_mask(bool* masked, int64_t rows, int64_t cols, cudaStream_t s) {
  SDPA_ELEMENTWISE(causal_mask_kernel, rows * cols, masked, rows, cols);
  return cudaGetLastError();
}

#undef SDPA_ELEMENTWISE

}  // namespace sdpa
