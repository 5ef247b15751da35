// Elementwise kernels of the unfused backends. Each launcher enqueues one kernel on `stream`
// and returns cudaGetLastError(); those of PyTorch's TensorIterator ops enqueue one a piece where
// an operand passes int32 byte offsets, as PyTorch does (int32_pieces.h). Element counts are
// 64-bit; masks are [Sq, Skv] and broadcast over the leading (batch, head) dimensions.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "dtype.h"

namespace sdpa {

// 16-bit tensors of the user's dtype.
cudaError_t launch_scale(DType t, const void* in, void* out, int64_t n, float factor, cudaStream_t s);
cudaError_t launch_masked_fill(DType t, void* data, const bool* mask, int64_t n, int64_t mask_elems,
                               float value, cudaStream_t s);
cudaError_t launch_cast_to_float(DType t, const void* in, float* out, int64_t n, cudaStream_t s);
cudaError_t launch_cast_from_float(DType t, const float* in, void* out, int64_t n, cudaStream_t s);
// out = a * b, elementwise (may alias a or b).
cudaError_t launch_mul(DType t, const void* a, const void* b, void* out, int64_t n, cudaStream_t s);
// out[m, c, r] = in[m, r, c] over `matrices` [rows, cols] matrices: a transposed gradient made
// contiguous, as autograd's AccumulateGrad does for a leaf whose gradient arrives transposed.
cudaError_t launch_transpose_matrices(DType t, const void* in, void* out, int64_t matrices,
                                      int64_t rows, int64_t cols, cudaStream_t s);

// fp32 tensors.
cudaError_t launch_scale_float(const float* in, float* out, int64_t n, float factor, cudaStream_t s);
cudaError_t launch_mul_float(const float* a, const float* b, float* out, int64_t n, cudaStream_t s);
cudaError_t launch_fill_float(float* out, int64_t n, float value, cudaStream_t s);
cudaError_t launch_add_mask_float(float* data, const float* mask, int64_t n, int64_t mask_elems,
                                  cudaStream_t s);
// Scalars named `*_device` are one-element device tensors, as PyTorch's scalar_tensor() makes.
// out = isneginf(in): a unary op, with no -inf scalar tensor to fill first.
cudaError_t launch_isneginf_float(const float* in, bool* out, int64_t n, cudaStream_t s);
// out[r, c] = row_cond[r] ? *if_true_device : if_false[r, c]
cudaError_t launch_where_rows_float(const bool* row_cond, const float* if_true_device,
                                    const float* if_false, float* out, int64_t rows, int64_t cols,
                                    cudaStream_t s);

// Boolean masks.
cudaError_t launch_fill_bool(bool* out, int64_t n, bool value, cudaStream_t s);
// out = tril(in): keeps in[i, j] where j <= i, false above the diagonal.
cudaError_t launch_tril_bool(const bool* in, bool* out, int64_t rows, int64_t cols, cudaStream_t s);
// out = cond ? *if_true_device : *if_false_device (PyTorch's where(mask, 0, -inf), whose two
// Python scalars each become a filled one-element tensor)
cudaError_t launch_where_scalar_float(const bool* cond, float* out, int64_t n,
                                      const float* if_true_device, const float* if_false_device,
                                      cudaStream_t s);
// masked[i, j] = j > i (true where the causal mask hides the key), built in one kernel.
cudaError_t launch_causal_mask(bool* masked, int64_t rows, int64_t cols, cudaStream_t s);

}  // namespace sdpa
