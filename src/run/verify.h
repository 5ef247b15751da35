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

// Bounds for 16-bit attention against an fp32 reference on standard-normal inputs.
Tolerance tolerance_for(DType t);

// `sums` is a device scratch for the reduction. Synchronises `stream`.
Verification verify_output(DType t, const void* out, const float* ref, int64_t n, ErrorSums* sums,
                           cudaStream_t stream);

}  // namespace sdpa
