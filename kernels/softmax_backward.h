// The softmax's backward over the last dimension, as PyTorch's _softmax_backward_data runs it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "dtype.h"

namespace sdpa {

// d_in[r, c] = y[r, c] * (d_out[r, c] - sum_c' d_out[r, c'] * y[r, c']), with y the softmax's
// output, in fp32 arithmetic on 16-bit tensors; d_in may alias d_out.
cudaError_t launch_softmax_backward_rows(DType t, const void* y, const void* d_out, void* d_in,
                                         int64_t rows, int64_t cols, cudaStream_t s);
// The same on fp32 tensors.
cudaError_t launch_softmax_backward_rows_float(const float* y, const float* d_out, float* d_in,
                                               int64_t rows, int64_t cols, cudaStream_t s);

}  // namespace sdpa
