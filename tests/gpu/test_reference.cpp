// The GPU reference against fp64 on the CPU, and verification that catches a wrong output.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "gpu/check.h"
#include "gpu/device_buffer.h"
#include "host_checks.h"
#include "elementwise.h"
#include "random_fill.h"
#include "reference.h"
#include "run/reference_cpu.h"
#include "run/verify.h"

namespace sdpa {
namespace {

struct SmallCase {
  Problem p;
  CudaStream stream;
  DeviceBuffer q, k, v, ref, scratch;

  explicit SmallCase(const Problem& problem)
      : p(problem),
        q(static_cast<std::size_t>(p.q_elements()) * 2),
        k(static_cast<std::size_t>(p.kv_elements()) * 2),
        v(static_cast<std::size_t>(p.kv_elements()) * 2),
        ref(static_cast<std::size_t>(p.q_elements()) * sizeof(float)),
        scratch(1 << 20) {
    const uint64_t seed = std::random_device{}();
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, q.get(), p.q_elements(), seed, 0, stream.get()));
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, k.get(), p.kv_elements(), seed, 1, stream.get()));
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, v.get(), p.kv_elements(), seed, 2, stream.get()));
    const AttentionShape shape{p.batch, p.heads, p.kv_heads, p.seq_q, p.seq_kv, p.head_dim, p.causal,
                               static_cast<float>(p.softmax_scale())};
    // A small scratch forces several launches, exercising the row chunking.
    SDPA_CHECK_CUDA(launch_reference_attention(p.dtype, shape, q.get(), k.get(), v.get(), ref.as<float>(),
                                               scratch.as<float>(), 4 * p.seq_kv, stream.get()));
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream.get()));
  }
};

class ReferenceVsCpu : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, bool, int64_t>> {};

TEST_P(ReferenceVsCpu, AgreesWithFp64) {
  const auto [sq, skv, causal, d] = GetParam();
  Problem p;
  p.batch = 2;
  p.heads = 4;
  p.kv_heads = 2;
  p.seq_q = sq;
  p.seq_kv = skv;
  p.head_dim = d;
  p.causal = causal;
  SmallCase c(p);
  const auto q = to_host_floats(p.dtype, c.q, p.q_elements(), c.stream.get());
  const auto k = to_host_floats(p.dtype, c.k, p.kv_elements(), c.stream.get());
  const auto v = to_host_floats(p.dtype, c.v, p.kv_elements(), c.stream.get());
  const std::vector<double> expected = reference_attention_cpu(p, q, k, v);
  EXPECT_LT(relative_l2(to_host(c.ref), expected), 1e-5);  // fp32 arithmetic on exact inputs
}

INSTANTIATE_TEST_SUITE_P(SmallShapes, ReferenceVsCpu,
                         ::testing::Values(std::tuple{1, 1, true, 64}, std::tuple{17, 17, true, 64},
                                           std::tuple{33, 70, true, 128}, std::tuple{70, 33, true, 32},
                                           std::tuple{100, 100, false, 96}, std::tuple{5, 200, false, 256}));

TEST(Verification, CatchesUnwrittenAndWrongOutputs) {
  Problem p;
  p.batch = 1;
  p.heads = 2;
  p.kv_heads = 2;
  p.seq_q = p.seq_kv = 64;
  p.causal = true;
  SmallCase c(p);
  DeviceBuffer out(static_cast<std::size_t>(p.q_elements()) * 2);
  DeviceBuffer sums(sizeof(ErrorSums));
  const int64_t n = p.q_elements();

  // The reference itself, rounded to bf16, passes.
  SDPA_CHECK_CUDA(launch_cast_from_float(p.dtype, c.ref.as<float>(), out.get(), n, c.stream.get()));
  EXPECT_TRUE(verify_output(p.dtype, p.seq_kv, out.get(), c.ref.as<float>(), n, sums.as<ErrorSums>(), c.stream.get()).passed);

  // One element left poisoned fails.
  SDPA_CHECK_CUDA(launch_poison(p.dtype, out.as<char>() + 2 * (n - 1), 1, c.stream.get()));
  const Verification poisoned = verify_output(p.dtype, p.seq_kv, out.get(), c.ref.as<float>(), n, sums.as<ErrorSums>(), c.stream.get());
  EXPECT_FALSE(poisoned.passed);
  EXPECT_EQ(poisoned.non_finite, 1u);

  // One row of the output off by 0.1 (a wrong tile edge, say): under the old flat 0.25 bound it
  // passed; the error model's bound catches it.
  SDPA_CHECK_CUDA(launch_cast_from_float(p.dtype, c.ref.as<float>(), out.get(), n, c.stream.get()));
  DeviceBuffer shifted(static_cast<std::size_t>(n) * sizeof(float));
  SDPA_CHECK_CUDA(cudaMemcpyAsync(shifted.get(), c.ref.get(), static_cast<std::size_t>(n) * sizeof(float),
                                  cudaMemcpyDeviceToDevice, c.stream.get()));
  std::vector<float> row(static_cast<std::size_t>(p.head_dim));
  SDPA_CHECK_CUDA(cudaMemcpyAsync(row.data(), shifted.as<float>() + n - p.head_dim, row.size() * sizeof(float),
                                  cudaMemcpyDeviceToHost, c.stream.get()));
  SDPA_CHECK_CUDA(cudaStreamSynchronize(c.stream.get()));
  for (float& x : row) x += 0.1f;
  SDPA_CHECK_CUDA(cudaMemcpy(shifted.as<float>() + n - p.head_dim, row.data(), row.size() * sizeof(float),
                             cudaMemcpyHostToDevice));
  SDPA_CHECK_CUDA(launch_cast_from_float(p.dtype, shifted.as<float>(), out.get(), n, c.stream.get()));
  const Verification one_row = verify_output(p.dtype, p.seq_kv, out.get(), c.ref.as<float>(), n, sums.as<ErrorSums>(),
                                             c.stream.get());
  EXPECT_FALSE(one_row.passed) << "max abs " << one_row.max_abs_error;
  EXPECT_GT(one_row.max_abs_error, 0.05);

  // Scaled by 1.1 everywhere: finite but wrong.
  DeviceBuffer scaled(static_cast<std::size_t>(n) * sizeof(float));
  SDPA_CHECK_CUDA(launch_scale_float(c.ref.as<float>(), scaled.as<float>(), n, 1.1f, c.stream.get()));
  SDPA_CHECK_CUDA(launch_cast_from_float(p.dtype, scaled.as<float>(), out.get(), n, c.stream.get()));
  EXPECT_FALSE(verify_output(p.dtype, p.seq_kv, out.get(), c.ref.as<float>(), n, sums.as<ErrorSums>(), c.stream.get()).passed);
}

}  // namespace
}  // namespace sdpa
