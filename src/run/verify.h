// Checks a backend's output against the fp32 reference with a tolerance per dtype.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

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

// A gradient (dQ, dK or dV) against the fp32 reference backward. Its relative bound is looser than
// the output's: a 16-bit backward rounds P, dP and dS as well. Its largest error is bounded
// against the reference's RMS (a gradient has no convex-combination bound as O has); see
// docs/verification-notes.md.
// `tensor` names it in the result ("dQ").
Verification verify_gradient(DType t, int64_t reduction_length, const void* grad, const float* ref,
                             int64_t n, ErrorSums* sums, cudaStream_t stream, const char* tensor);

// The check that failed, or else the one nearest its bound, named by its tensor.
Verification worst_verification(const std::vector<Verification>& checks);

}  // namespace sdpa
