// Checks a backend's output against the fp32 reference with a tolerance per dtype.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "compare.h"
#include "dtype.h"
#include "model/result.h"

namespace sdpa {

struct Tolerance {
  double rel_l2;
  double max_abs;
};

// Bounds for 16-bit attention against the fp32 reference on the runner's standard-normal inputs,
// from the error model in docs/verification-notes.md: the dtype's unit roundoff times the
// roundings a forward makes (output, probabilities, scores), and the reference's own fp32 error
// over `reduction_length` keys.
Tolerance tolerance_for(DType t, int64_t reduction_length);

// `sums` is a device scratch for the reduction. Synchronises `stream`.
Verification verify_output(DType t, int64_t reduction_length, const void* out, const float* ref, int64_t n,
                           ErrorSums* sums, cudaStream_t stream);

}  // namespace sdpa
