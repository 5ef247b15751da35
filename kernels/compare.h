// Error statistics of an output against the fp32 reference, reduced on the device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "dtype.h"

namespace sdpa {

struct ErrorSums {
  double squared_error;      // sum (out - ref)^2 over finite outputs
  double squared_reference;  // sum ref^2
  float max_abs_error;       // over finite outputs
  unsigned long long non_finite;  // NaN or Inf outputs (unwritten poison shows here)
  float max_abs_reference;        // the largest |ref|
};

// `sums` is device memory; the launcher zeroes it first.
cudaError_t launch_compare(DType t, const void* out, const float* ref, int64_t n, ErrorSums* sums,
                           cudaStream_t s);

}  // namespace sdpa
