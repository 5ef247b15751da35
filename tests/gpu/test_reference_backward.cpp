// The GPU reference backward against the fp64 CPU backward (itself checked against central
// differences in the unit tests), and a gradient check that catches a wrong gradient.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "gpu/check.h"
#include "gpu/device_buffer.h"
#include "gpu/problem_shape.h"
#include "host_checks.h"
#include "elementwise.h"
#include "random_fill.h"
#include "reference.h"
#include "reference_backward.h"
#include "run/reference_cpu.h"
#include "run/verify.h"

namespace sdpa {
namespace {

struct BackwardCase {
  Problem p;
  CudaStream stream;
  DeviceBuffer q, k, v, d_out, dq, dk, dv, row_stats, scratch;

  explicit BackwardCase(const Problem& problem)
      : p(problem),
        q(static_cast<std::size_t>(p.q_elements()) * 2),
        k(static_cast<std::size_t>(p.kv_elements()) * 2),
        v(static_cast<std::size_t>(p.kv_elements()) * 2),
        d_out(static_cast<std::size_t>(p.q_elements()) * 2),
        dq(static_cast<std::size_t>(p.q_elements()) * sizeof(float)),
        dk(static_cast<std::size_t>(p.kv_elements()) * sizeof(float)),
        dv(static_cast<std::size_t>(p.kv_elements()) * sizeof(float)),
        row_stats(static_cast<std::size_t>(reference_backward_row_stats_floats(attention_shape(p))) * sizeof(float)),
        scratch(1 << 20) {
    const uint64_t seed = std::random_device{}();
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, q.get(), p.q_elements(), seed, 0, stream.get()));
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, k.get(), p.kv_elements(), seed, 1, stream.get()));
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, v.get(), p.kv_elements(), seed, 2, stream.get()));
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, d_out.get(), p.q_elements(), seed, 3, stream.get()));
    // A small scratch forces several launches of the query-row kernel.
    SDPA_CHECK_CUDA(launch_reference_attention_backward(
        p.dtype, attention_shape(p), q.get(), k.get(), v.get(), d_out.get(), dq.as<float>(), dk.as<float>(),
        dv.as<float>(), row_stats.as<float>(), scratch.as<float>(), 4 * p.seq_kv, stream.get()));
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream.get()));
  }
};

class ReferenceBackwardVsCpu
    : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, bool, int64_t>> {};

TEST_P(ReferenceBackwardVsCpu, AgreesWithFp64) {
  const auto [sq, skv, causal, d] = GetParam();
  Problem p;
  p.batch = 2;
  p.heads = 4;
  p.kv_heads = 2;
  p.seq_q = sq;
  p.seq_kv = skv;
  p.head_dim = d;
  p.causal = causal;
  BackwardCase c(p);
  const Gradients expected = reference_attention_backward_cpu(
      p, to_host_floats(p.dtype, c.q, p.q_elements(), c.stream.get()),
      to_host_floats(p.dtype, c.k, p.kv_elements(), c.stream.get()),
      to_host_floats(p.dtype, c.v, p.kv_elements(), c.stream.get()),
      to_host_floats(p.dtype, c.d_out, p.q_elements(), c.stream.get()));
  // fp32 arithmetic on exact inputs; the gradients sum more terms than O does. At S = 1 dQ and dK
  // are exactly 0 (one key: dS cancels), so they are judged against dV's scale.
  EXPECT_LT(relative_l2(to_host(c.dq), expected.dq, rms(expected.dv)), 1e-5);
  EXPECT_LT(relative_l2(to_host(c.dk), expected.dk, rms(expected.dv)), 1e-5);
  EXPECT_LT(relative_l2(to_host(c.dv), expected.dv), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(SmallShapes, ReferenceBackwardVsCpu,
                         ::testing::Values(std::tuple{1, 1, true, 64}, std::tuple{17, 17, true, 64},
                                           std::tuple{33, 70, true, 128}, std::tuple{70, 33, true, 32},
                                           std::tuple{100, 100, false, 96}, std::tuple{5, 200, false, 256}));

TEST(GradientVerification, CatchesAWrongGradient) {
  Problem p;
  p.batch = 1;
  p.heads = 4;
  p.kv_heads = 2;
  p.seq_q = p.seq_kv = 200;
  p.causal = true;
  BackwardCase c(p);
  const int64_t n = p.kv_elements();
  DeviceBuffer grad(static_cast<std::size_t>(n) * 2);
  DeviceBuffer sums(sizeof(ErrorSums));
  const int64_t rows = p.group_size() * p.seq_q;
  SDPA_CHECK_CUDA(launch_cast_from_float(p.dtype, c.dk.as<float>(), grad.get(), n, c.stream.get()));
  const Verification rounded =
      verify_gradient(p.dtype, rows, grad.get(), c.dk.as<float>(), n, sums.as<ErrorSums>(), c.stream.get(), "dK");
  EXPECT_TRUE(rounded.passed) << rounded.rel_l2_error << " of " << rounded.rel_l2_tolerance;
  EXPECT_EQ(rounded.tensor, "dK");
  // dK without the softmax scale (a missed factor): finite, and wrong.
  DeviceBuffer unscaled(static_cast<std::size_t>(n) * sizeof(float));
  SDPA_CHECK_CUDA(launch_scale_float(c.dk.as<float>(), unscaled.as<float>(), n, 8.f, c.stream.get()));
  SDPA_CHECK_CUDA(launch_cast_from_float(p.dtype, unscaled.as<float>(), grad.get(), n, c.stream.get()));
  EXPECT_FALSE(
      verify_gradient(p.dtype, rows, grad.get(), c.dk.as<float>(), n, sums.as<ErrorSums>(), c.stream.get(), "dK").passed);
  // One element unwritten.
  SDPA_CHECK_CUDA(launch_cast_from_float(p.dtype, c.dk.as<float>(), grad.get(), n, c.stream.get()));
  SDPA_CHECK_CUDA(launch_poison(p.dtype, grad.as<char>() + 2 * (n - 1), 1, c.stream.get()));
  const Verification poisoned =
      verify_gradient(p.dtype, rows, grad.get(), c.dk.as<float>(), n, sums.as<ErrorSums>(), c.stream.get(), "dK");
  EXPECT_FALSE(poisoned.passed);
  EXPECT_EQ(poisoned.non_finite, 1u);
}

}  // namespace
}  // namespace sdpa
