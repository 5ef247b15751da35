#include "run/verify.h"

#include <algorithm>
#include <cmath>

#include "gpu/check.h"

namespace sdpa {

namespace {

// The largest |x| the input generator can produce: Box-Muller over 24-bit uniforms in (0, 1] gives
// at most sqrt(-2 ln 2^-24) = 5.768, which rounds to 5.781 in bf16.
constexpr double kLargestInput = 5.79;

// Unit roundoff: bf16 keeps 8 significant bits, fp16 11.
double unit_roundoff(DType t) { return t == DType::bf16 ? 0x1p-8 : 0x1p-11; }

// fp32 sums over the keys, in the reference as in the kernels: a random-walk error of sqrt(n) fp32
// roundoffs, negligible for bf16 and small for fp16 at long lengths.
double reference_error(int64_t reduction_length) {
  return std::sqrt(static_cast<double>(std::max<int64_t>(reduction_length, 1))) * 0x1p-24;
}

}  // namespace

Tolerance tolerance_for(DType t, int64_t reduction_length) {
  const double u = unit_roundoff(t);
  const double reference = reference_error(reduction_length);
  // RMS: the committed H200 runs show 0.4 u (fp32 path, output rounding alone) to 1.2 u (scores
  // rounded twice, naive); 2.5 u leaves 2x over the worst of them.
  // Max: each output is a convex combination of V's rows (|v| <= kLargestInput); rounding the
  // output, the probabilities and (unfused) the scores each moves it by at most ~u of that.
  return Tolerance{2.5 * u + reference, (3 * u + reference) * kLargestInput};
}

namespace {

ErrorSums compare_on_device(DType t, const void* out, const float* ref, int64_t n, ErrorSums* sums,
                            cudaStream_t stream) {
  SDPA_CHECK_CUDA(launch_compare(t, out, ref, n, sums, stream));
  ErrorSums host{};
  SDPA_CHECK_CUDA(cudaMemcpyAsync(&host, sums, sizeof(host), cudaMemcpyDeviceToHost, stream));
  SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));
  return host;
}

Verification judged(const ErrorSums& host, const Tolerance& tol, const char* tensor) {
  Verification v;
  v.tensor = tensor;
  v.rel_l2_error = host.squared_reference > 0 ? std::sqrt(host.squared_error / host.squared_reference)
                                              : std::sqrt(host.squared_error);
  v.max_abs_error = host.max_abs_error;
  v.non_finite = host.non_finite;
  v.rel_l2_tolerance = tol.rel_l2;
  v.max_abs_tolerance = tol.max_abs;
  v.passed = v.non_finite == 0 && v.rel_l2_error <= tol.rel_l2 && v.max_abs_error <= tol.max_abs;
  return v;
}

// How close a check came to failing: its larger error-to-bound ratio (non-finite: failed).
double nearness(const Verification& v) {
  if (v.non_finite > 0) return INFINITY;
  return std::max(v.rel_l2_error / v.rel_l2_tolerance, v.max_abs_error / v.max_abs_tolerance);
}

// A gradient's largest error may be this many times its bound on the relative RMS error, times
// the reference's RMS: the largest of n normal errors is about sqrt(2 ln n) = 6.4 of their RMS at
// n = 10^9.
constexpr double kGradientMaxOverRms = 20;

}  // namespace

Verification verify_output(DType t, int64_t reduction_length, const void* out, const float* ref, int64_t n,
                           ErrorSums* sums, cudaStream_t stream) {
  return judged(compare_on_device(t, out, ref, n, sums, stream), tolerance_for(t, reduction_length), "O");
}

Verification verify_gradient(DType t, int64_t reduction_length, const void* grad, const float* ref,
                             int64_t n, ErrorSums* sums, cudaStream_t stream, const char* tensor,
                             double floor_rms, double* reference_rms) {
  ErrorSums host = compare_on_device(t, grad, ref, n, sums, stream);
  const double count = static_cast<double>(std::max<int64_t>(n, 1));
  const double rms = std::sqrt(host.squared_reference / count);
  if (reference_rms != nullptr) *reference_rms = rms;
  // The relative error against the larger scale: a reference below the floor counts as the floor.
  host.squared_reference = std::max(rms, floor_rms) * std::max(rms, floor_rms) * count;
  // Five roundings of the dtype's (P, dP, dS and the gradient itself, with room for one more).
  Tolerance tol{5 * unit_roundoff(t) + reference_error(reduction_length), 0};
  // Plus the relative bound times the largest |reference|: a gradient's error grows with its own
  // size, and under a causal mask the first keys' dK and dV sum over every query, far above the
  // RMS (autograd's D128 causal dK missed the RMS term alone by 2x on the H100, at 1.3u RMS).
  tol.max_abs = tol.rel_l2 * (kGradientMaxOverRms * std::max(rms, floor_rms) + host.max_abs_reference);
  return judged(host, tol, tensor);
}

Verification worst_verification(const std::vector<Verification>& checks) {
  Verification worst;
  double worst_nearness = -1;
  for (const Verification& v : checks) {
    const double n = v.passed ? nearness(v) : INFINITY;
    if (n > worst_nearness) {
      worst = v;
      worst_nearness = n;
    }
  }
  return worst;
}

}  // namespace sdpa
