#include "device_math.cuh"
#include "dispatch.cuh"
#include "softmax_backward.h"

namespace sdpa {
namespace {

using device::block_reduce;
using device::from_float;
using device::to_float;

constexpr int kRowBlock = 256;

// One block per row, from the product t = d_out * y: the row's sum of t, then t - y * sum (the
// second read comes from L1/L2).
template <typename T>
__global__ void __launch_bounds__(kRowBlock)
    softmax_backward_from_product_rows_kernel(const T* y, const T* product, T* d_in, int64_t cols) {
  __shared__ float scratch[32];
  const int64_t at = static_cast<int64_t>(blockIdx.x) * cols;
  float local = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) local += to_float(product[at + c]);
  const float sum = block_reduce<device::SumOp>(local, scratch);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    d_in[at + c] = from_float<T>(to_float(product[at + c]) - to_float(y[at + c]) * sum);
}

template <typename T>
cudaError_t launch_product_rows(const T* y, const T* product, T* d_in, int64_t rows, int64_t cols,
                                cudaStream_t s) {
  if (rows <= 0) return cudaSuccess;
  softmax_backward_from_product_rows_kernel<T>
      <<<static_cast<unsigned>(rows), kRowBlock, 0, s>>>(y, product, d_in, cols);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_softmax_backward_from_product_rows(DType t, const void* y, const void* product,
                                                      void* d_in, int64_t rows, int64_t cols, cudaStream_t s) {
  return dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launch_product_rows(static_cast<const T*>(y), static_cast<const T*>(product), static_cast<T*>(d_in),
                               rows, cols, s);
  });
}

cudaError_t launch_softmax_backward_from_product_rows_float(const float* y, const float* product, float* d_in,
                                                            int64_t rows, int64_t cols, cudaStream_t s) {
  return launch_product_rows(y, product, d_in, rows, cols, s);
}

}  // namespace sdpa
