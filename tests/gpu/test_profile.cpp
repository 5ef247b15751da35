// The profile pass on the GPU: what each unfused backend launches per forward, attributed by
// CUPTI, and the findings that name it. Skipped where CUPTI cannot record.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "gpu_test_support.h"
#include "run/runner.h"

namespace sdpa {
namespace {

bool has_rule(const CaseProfile& p, const std::string& rule) {
  return std::any_of(p.findings.begin(), p.findings.end(), [&](const Finding& f) { return f.rule == rule; });
}

TEST(Profile, UnfusedBackendsLaunchWhatTheirStructureSays) {
  std::string why_not;
  const std::unique_ptr<CuptiSession> session = CuptiSession::start(why_not);
  if (!session) GTEST_SKIP() << why_not;
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;

  Problem p;
  p.batch = 2;
  p.heads = 4;
  p.kv_heads = 4;
  p.seq_q = p.seq_kv = 1000;
  p.head_dim = 64;
  p.causal = true;
  SweepPlan plan{{p}, resolve_backends({"naive", "naive-inplace", "math"})};
  const auto results = run_sweep(plan, device, std::random_device{}(), one_sample_timing(), [](const CaseResult&) {}, session.get()).cases;
  ASSERT_EQ(results.size(), 3u);
  for (const CaseResult& r : results) {
    SCOPED_TRACE(r.backend);
    ASSERT_EQ(r.status, CaseStatus::ok) << r.reason;
    ASSERT_TRUE(r.profile.has_value());
    EXPECT_EQ(r.profile->forwards.size(), static_cast<std::size_t>(kProfileForwards));
    EXPECT_EQ(r.profile->dropped_records, 0u);
    EXPECT_EQ(r.profile->unattributed, 0u);
    ASSERT_TRUE(r.host.has_value());
    EXPECT_GT(r.host->per_call_us, 0);
    for (const KernelProfile& k : r.profile->kernels) EXPECT_TRUE(k.occupancy.has_value()) << k.name;
  }
  const CaseProfile& naive = *results[0].profile;
  EXPECT_EQ(naive.kernels_per_forward(), 5);
  EXPECT_EQ(naive.memcpys_per_forward(), 1);
  EXPECT_TRUE(has_rule(naive, "hidden-memcpy"));
  const CaseProfile& inplace = *results[1].profile;
  EXPECT_EQ(inplace.kernels_per_forward(), 5);
  EXPECT_EQ(inplace.memcpys_per_forward(), 0);
  EXPECT_FALSE(has_rule(inplace, "hidden-memcpy"));
  const CaseProfile& math = *results[2].profile;
  EXPECT_GE(math.kernels_per_forward(), 18);
  EXPECT_TRUE(has_rule(math, "simt-gemm"));
  EXPECT_TRUE(has_rule(math, "mask-every-call"));
  EXPECT_TRUE(has_rule(math, "safe-softmax"));
}

}  // namespace
}  // namespace sdpa
