// Every built backend against the reference on fresh random inputs, odd sizes included.
#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "gpu_test_support.h"
#include "run/runner.h"

namespace sdpa {
namespace {

uint64_t fresh_seed() { return std::random_device{}(); }

std::vector<Problem> correctness_problems() {
  std::vector<Problem> problems;
  for (const DType dtype : {DType::bf16, DType::fp16})
    for (const bool causal : {false, true})
      for (const int64_t d : {64, 128})
        for (const int64_t s : {1, 17, 1000, 1024, 4097}) {
          Problem p;
          p.batch = 2;
          p.heads = 2;
          p.kv_heads = 2;
          p.seq_q = p.seq_kv = s;
          p.head_dim = d;
          p.dtype = dtype;
          p.causal = causal;
          problems.push_back(p);
        }
  return problems;
}

// Grouped-query attention and Sq != Skv in both directions.
std::vector<Problem> uneven_problems() {
  std::vector<Problem> problems;
  for (const bool causal : {false, true})
    for (const auto& [sq, skv] : {std::pair<int64_t, int64_t>{17, 1000}, {1000, 17}, {127, 64}}) {
      Problem p;
      p.batch = 1;
      p.heads = 8;
      p.kv_heads = 2;
      p.seq_q = sq;
      p.seq_kv = skv;
      p.head_dim = 64;
      p.dtype = DType::bf16;
      p.causal = causal;
      problems.push_back(p);
    }
  return problems;
}

void expect_all_verified(const std::vector<Problem>& problems) {
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  SweepPlan plan{problems, {}};
  for (const BackendEntry& e : backend_registry())
    if (e.built()) plan.backends.push_back({&e, false});
  const uint64_t seed = fresh_seed();
  const auto results = run_sweep(plan, device, seed, one_sample_timing(), [](const CaseResult&) {}).cases;
  ASSERT_EQ(results.size(), plan.problems.size() * plan.backends.size());
  for (const CaseResult& r : results) {
    SCOPED_TRACE(fmt::format("{} {} {} causal={} seed={}", r.backend, r.problem.shape_label(),
                             dtype_name(r.problem.dtype), r.problem.causal, seed));
    // A backend may decline a case only for the reason its own support check gives.
    if (const auto why = find_backend(r.backend)->unsupported(r.problem, device)) {
      EXPECT_EQ(r.status, CaseStatus::skipped);
      EXPECT_EQ(r.reason, *why);
      continue;
    }
    EXPECT_EQ(r.status, CaseStatus::ok) << r.reason;
    ASSERT_TRUE(r.verification.has_value());
    EXPECT_TRUE(r.verification->passed);
    EXPECT_EQ(r.verification->non_finite, 0u);
  }
}

TEST(Backends, MatchReferenceOnOddAndEvenSizes) { expect_all_verified(correctness_problems()); }

TEST(Backends, MatchReferenceWithGroupedHeadsAndUnequalLengths) { expect_all_verified(uneven_problems()); }

}  // namespace
}  // namespace sdpa
