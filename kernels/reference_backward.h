// The GPU reference backward: exact-order fp32 gradients of attention for a given dO, one block
// per query row for dQ (that row's probabilities staged in a global scratch, as the forward
// reference does) and one block per key row for dK and dV (summed over the group's query heads).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention_shape.h"
#include "dtype.h"

namespace sdpa {

// Floats of `row_stats`: each query row's log-sum-exp and rowsum(dO * O).
int64_t reference_backward_row_stats_floats(const AttentionShape& shape);

// dq: [B, Hq, Sq, D], dk and dv: [B, Hkv, Skv, D], all fp32. scratch: as the forward reference's
// (reference_rows_per_launch rows of Skv floats).
cudaError_t launch_reference_attention_backward(DType t, const AttentionShape& shape, const void* q,
                                                const void* k, const void* v, const void* d_out,
                                                float* dq, float* dk, float* dv, float* row_stats,
                                                float* scratch, int64_t scratch_floats, cudaStream_t s);

}  // namespace sdpa
