// The fused backends (flash, efficient, and flash3 where it is built) on the shapes that stress
// their tiles: lengths around the 64- and 128-row tiles, Sq != Skv both ways, grouped heads, both
// head dims and dtypes, and a head dim they do not build, which must be skipped with the
// backend's own reason (flash3 is skipped everywhere but on sm_90, with its own reason).
#include <gtest/gtest.h>

#include <random>
#include <utility>

#include <fmt/format.h>

#include "backends/efficient.h"
#include "backends/flash.h"
#include "backends/flash3.h"
#include "gpu/check.h"
#include "gpu/device_buffer.h"
#include "gpu/problem_shape.h"
#include "gpu_test_support.h"
#include "random_fill.h"
#include "reference.h"
#include "run/runner.h"
#include "run/verify.h"

namespace sdpa {
namespace {

std::vector<Problem> fused_problems() {
  const std::pair<int64_t, int64_t> lengths[] = {
      {1, 1},     {17, 17},   {64, 64},   {127, 127}, {129, 129}, {1000, 1000}, {4097, 4097},
      {17, 1000}, {1000, 17}, {127, 300}, {300, 127}, {1, 4097},  {1024, 1024}, {4097, 1000}};
  std::vector<Problem> problems;
  for (const DType dtype : {DType::bf16, DType::fp16})
    for (const bool causal : {false, true})
      for (const int64_t d : {64, 128})
        for (const auto& [sq, skv] : lengths) {
          Problem p;
          p.batch = 2;
          p.heads = 4;
          p.kv_heads = sq == skv ? 4 : 2;  // grouped heads where the lengths differ
          p.seq_q = sq;
          p.seq_kv = skv;
          p.head_dim = d;
          p.dtype = dtype;
          p.causal = causal;
          problems.push_back(p);
        }
  Problem unbuilt;
  unbuilt.batch = 1;
  unbuilt.heads = 2;
  unbuilt.kv_heads = 2;
  unbuilt.seq_q = unbuilt.seq_kv = 100;
  unbuilt.head_dim = 96;
  problems.push_back(unbuilt);
  return problems;
}

TEST(FusedBackends, MatchReferenceOnTileEdgesGroupedHeadsAndUnequalLengths) {
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  std::vector<std::string> names = {"flash", "efficient"};
  if (flash3_backend_entry().built()) names.push_back("flash3");
  const SweepPlan plan{fused_problems(), resolve_backends(names)};
  const uint64_t seed = std::random_device{}();
  const auto results =
      run_sweep(plan, device, seed, one_sample_timing()).cases;
  ASSERT_EQ(results.size(), plan.problems.size() * plan.backends.size());
  int verified = 0;
  int expected = 0;
  for (const CaseResult& r : results) {
    SCOPED_TRACE(fmt::format("{} {} {} causal={} seed={}", r.backend, r.problem.shape_label(),
                             dtype_name(r.problem.dtype), r.problem.causal, seed));
    const BackendEntry& entry = *find_backend(r.backend);
    const bool runs_here = r.backend != "flash3" || device.arch() == 90;
    if (r.problem.head_dim != 96 && runs_here) ++expected;
    if (const auto why = entry.unsupported(r.problem, device)) {
      EXPECT_TRUE(r.problem.head_dim == 96 || !runs_here) << *why;
      EXPECT_EQ(r.status, CaseStatus::skipped);
      EXPECT_EQ(r.reason, *why);
      continue;
    }
    EXPECT_EQ(r.status, CaseStatus::ok) << r.reason;
    ASSERT_TRUE(r.verification.has_value());
    EXPECT_TRUE(r.verification->passed);
    EXPECT_EQ(r.verification->non_finite, 0u);
    ++verified;
  }
  EXPECT_EQ(verified, expected);
  EXPECT_GE(verified, 2 * static_cast<int>(plan.problems.size() - 1));
}

// Two persistent flash3 launches at once, each on its own stream with its own backend: the tile
// queue lives in each one's workspace, so neither grid takes the other's tiles (with one queue
// in static device memory for both, they would).
TEST(Flash3, TwoPersistentLaunchesRunAtOnce) {
  const BackendEntry& flash3 = flash3_backend_entry();
  if (!flash3.built()) GTEST_SKIP() << "flash3 is not built: " << flash3.not_built_reason;
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  if (device.arch() != 90) GTEST_SKIP() << "flash3 runs on sm_90 only";
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "not causal");
    Problem p;
    p.batch = 4;
    p.heads = 8;
    p.kv_heads = 8;
    p.seq_q = p.seq_kv = 2000;  // 512 tiles of 128 rows: many rounds of a persistent grid
    p.head_dim = 128;
    p.causal = causal;
    const int64_t n_q = p.q_elements();
    const int64_t n_kv = p.kv_elements();
    CudaStream streams[2];
    DeviceBuffer q(static_cast<std::size_t>(n_q) * 2), k(static_cast<std::size_t>(n_kv) * 2),
        v(static_cast<std::size_t>(n_kv) * 2), ref(static_cast<std::size_t>(n_q) * sizeof(float)),
        scratch(std::size_t{64} << 20), sums(sizeof(ErrorSums));
    const uint64_t seed = std::random_device{}();
    const cudaStream_t s0 = streams[0].get();
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, q.get(), n_q, seed, 0, s0));
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, k.get(), n_kv, seed, 1, s0));
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, v.get(), n_kv, seed, 2, s0));
    SDPA_CHECK_CUDA(launch_reference_attention(p.dtype, attention_shape(p), q.get(), k.get(), v.get(),
                                               ref.as<float>(), scratch.as<float>(),
                                               static_cast<int64_t>(scratch.bytes() / sizeof(float)), s0));
    SDPA_CHECK_CUDA(cudaStreamSynchronize(s0));
    std::unique_ptr<Backend> backends[2];
    DeviceBuffer outs[2] = {DeviceBuffer(static_cast<std::size_t>(n_q) * 2),
                            DeviceBuffer(static_cast<std::size_t>(n_q) * 2)};
    for (int b = 0; b < 2; ++b) {
      backends[b] = flash3.create("overlap-persistent");
      backends[b]->prepare(p, streams[b].get());
      SDPA_CHECK_CUDA(launch_poison(p.dtype, outs[b].get(), n_q, streams[b].get()));
    }
    SDPA_CHECK_CUDA(cudaDeviceSynchronize());
    for (int round = 0; round < 5; ++round)
      for (int b = 0; b < 2; ++b)
        backends[b]->run({q.get(), k.get(), v.get(), outs[b].get()}, streams[b].get());
    SDPA_CHECK_CUDA(cudaDeviceSynchronize());
    for (int b = 0; b < 2; ++b) {
      const Verification check = verify_output(p.dtype, p.seq_kv, outs[b].get(), ref.as<float>(), n_q,
                                               sums.as<ErrorSums>(), s0);
      EXPECT_TRUE(check.passed) << "launch " << b << ": rel L2 " << check.rel_l2_error << ", max abs "
                                << check.max_abs_error << ", " << check.non_finite << " non-finite (seed "
                                << seed << ")";
    }
  }
}

}  // namespace
}  // namespace sdpa
