// The softmax's backward over the last dimension, as PyTorch's _softmax_backward_data runs it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "dtype.h"

namespace sdpa {

// PyTorch's CUDA `_softmax_backward_data` in two launches: the product t = d_out * y first (its
// own elementwise kernel, launch_mul), then this: d_in[r, c] = t[r, c] - y[r, c] * sum_c' t[r, c'].
// d_in may alias t.
cudaError_t launch_softmax_backward_from_product_rows(DType t, const void* y, const void* product,
                                                      void* d_in, int64_t rows, int64_t cols, cudaStream_t s);
cudaError_t launch_softmax_backward_from_product_rows_float(const float* y, const float* product, float* d_in,
                                                            int64_t rows, int64_t cols, cudaStream_t s);

}  // namespace sdpa
