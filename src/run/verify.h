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
// `tensor` names it in the result ("dQ"). Both bounds are taken against the larger of the
// reference's RMS and `floor_rms`: dQ and dK are sums of dS = P * (dP - rowsum(dO * O)), which
// cancels to exactly 0 where a query sees one key (S = 1), so their reference can be 0 while the
// roundings of P and dP are not; dV's RMS (P^T dO, what those roundings act on) is their floor.
// `reference_rms`, when given, receives this reference's RMS.
Verification verify_gradient(DType t, int64_t reduction_length, const void* grad, const float* ref,
                             int64_t n, ErrorSums* sums, cudaStream_t stream, const char* tensor,
                             double floor_rms = 0, double* reference_rms = nullptr);

// The check that failed, or else the one nearest its bound, named by its tensor.
Verification worst_verification(const std::vector<Verification>& checks);

}  // namespace sdpa
