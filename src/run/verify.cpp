#include "run/verify.h"

#include <cmath>

#include "gpu/check.h"

namespace sdpa {

Tolerance tolerance_for(DType t) {
  // bf16 keeps 8 mantissa bits, fp16 11: the scores and probabilities round accordingly.
  return t == DType::bf16 ? Tolerance{2e-2, 0.25} : Tolerance{5e-3, 0.06};
}

Verification verify_output(DType t, const void* out, const float* ref, int64_t n, ErrorSums* sums,
                           cudaStream_t stream) {
  SDPA_CHECK_CUDA(launch_compare(t, out, ref, n, sums, stream));
  ErrorSums host{};
  SDPA_CHECK_CUDA(cudaMemcpyAsync(&host, sums, sizeof(host), cudaMemcpyDeviceToHost, stream));
  SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));

  const Tolerance tol = tolerance_for(t);
  Verification v;
  v.rel_l2_error = host.squared_reference > 0 ? std::sqrt(host.squared_error / host.squared_reference)
                                              : std::sqrt(host.squared_error);
  v.max_abs_error = host.max_abs_error;
  v.non_finite = host.non_finite;
  v.rel_l2_tolerance = tol.rel_l2;
  v.max_abs_tolerance = tol.max_abs;
  v.passed = v.non_finite == 0 && v.rel_l2_error <= tol.rel_l2 && v.max_abs_error <= tol.max_abs;
  return v;
}

}  // namespace sdpa
