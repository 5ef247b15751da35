// The GPU reference: exact-order fp32 attention, one block per query row, with that row's
// scores staged in a global scratch buffer so any sequence length fits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention_shape.h"
#include "dtype.h"

namespace sdpa {

// Rows processed per launch for a scratch buffer of `scratch_floats`.
int64_t reference_rows_per_launch(const AttentionShape& shape, int64_t scratch_floats);

// out: [B, Hq, Sq, D] fp32. scratch: at least reference_rows_per_launch(...) * Skv floats.
cudaError_t launch_reference_attention(DType t, const AttentionShape& shape, const void* q,
                                       const void* k, const void* v, float* out, float* scratch,
                                       int64_t scratch_floats, cudaStream_t s);

}  // namespace sdpa
