// Row-wise reductions of the unfused backends: softmax over the last dimension and all().
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "dtype.h"

namespace sdpa {

// out[r, :] = softmax(in[r, :]) with fp32 arithmetic; in == out is allowed.
cudaError_t launch_softmax_rows(DType t, const void* in, void* out, int64_t rows, int64_t cols,
                                cudaStream_t s);
cudaError_t launch_softmax_rows_float(const float* in, float* out, int64_t rows, int64_t cols,
                                      cudaStream_t s);
// out[r] = all(in[r, :])
cudaError_t launch_all_rows(const bool* in, bool* out, int64_t rows, int64_t cols, cudaStream_t s);

}  // namespace sdpa
