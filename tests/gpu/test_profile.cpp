// The profile pass on the GPU: what each unfused backend launches per forward, attributed by
// CUPTI, and the findings that name it. CUPTI must record here, unless SDPA_TEST_EXPECT_ABSENT
// names it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <unordered_map>

#include "gpu_test_support.h"
#include "report/timeline.h"
#include "run/runner.h"

namespace sdpa {
namespace {

bool has_rule(const CaseProfile& p, const std::string& rule) {
  return std::any_of(p.findings.begin(), p.findings.end(), [&](const Finding& f) { return f.rule == rule; });
}

TEST(Profile, UnfusedBackendsLaunchWhatTheirStructureSays) {
  std::string why_not;
  const std::unique_ptr<CuptiSession> session = CuptiSession::start(why_not);
  SDPA_REQUIRE_LIBRARY(session, "cupti", why_not);
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
  const auto results = run_sweep(plan, device, std::random_device{}(), one_sample_timing(), {}, {session.get()}).cases;
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

// What the timeline reads from a record: where the work ran, which call launched it (by name),
// which process and thread made the call and opened the NVTX range.
TEST(Profile, RecordsCarryWhatTheTimelineShows) {
  std::string why_not;
  const std::unique_ptr<CuptiSession> session = CuptiSession::start(why_not);
  SDPA_REQUIRE_LIBRARY(session, "cupti", why_not);
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  Problem p;
  p.batch = 1;
  p.heads = p.kv_heads = 2;
  p.seq_q = p.seq_kv = 256;
  p.head_dim = 64;
  SweepPlan plan{{p}, resolve_backends({"naive"})};
  std::vector<ActivityRecords> kept;
  std::vector<CaseResult> cases;
  SweepHooks hooks;
  hooks.on_case = [&](const CaseResult& c) { cases.push_back(c); };
  hooks.on_records = [&](const CaseResult&, ActivityRecords&& r) { kept.push_back(std::move(r)); };
  run_sweep(plan, device, 1, one_sample_timing(), hooks, {session.get()});
  ASSERT_EQ(kept.size(), 1u);
  ASSERT_EQ(cases.size(), 1u);
  ASSERT_TRUE(cases[0].profile.has_value());
  const ActivityRecords& r = kept[0];
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  std::unordered_map<uint32_t, const ApiRecord*> calls;
  for (const ApiRecord& a : r.api_calls) {
    calls[a.correlation] = &a;
    EXPECT_EQ(a.process_id, pid);
    EXPECT_NE(a.thread_id, 0u);
  }
  // The records are what the profile was made from (at this size the naive path runs 4 kernels
  // and no copy on the H200; 5 and a copy at the study's shape).
  const int per_forward = cases[0].profile->kernels_per_forward();
  ASSERT_GE(per_forward, 3);
  ASSERT_EQ(r.kernels.size(), static_cast<std::size_t>(per_forward) * kProfileForwards);
  for (const KernelRecord& k : r.kernels) {
    SCOPED_TRACE(k.name);
    EXPECT_EQ(k.place.device_id, static_cast<uint32_t>(device.ordinal));
    EXPECT_NE(k.place.context_id, 0u);
    EXPECT_EQ(k.place.graph_id, 0u);
    ASSERT_EQ(calls.count(k.correlation), 1u);
    const ApiRecord& launch = *calls[k.correlation];
    EXPECT_TRUE(launch.name.starts_with("cu")) << launch.name;
    EXPECT_EQ(launch.name.find("_v"), std::string::npos) << launch.name;  // CUPTI's version suffix dropped
  }
  ASSERT_EQ(r.memcpys.size(),
            static_cast<std::size_t>(cases[0].profile->memcpys_per_forward()) * kProfileForwards);
  for (const MemcpyRecord& m : r.memcpys)
    EXPECT_EQ(m.place.stream_id, r.kernels[0].place.stream_id);  // one stream for the forward
  ASSERT_EQ(r.markers.size(), 2u * kProfileForwards);
  for (const MarkerRecord& m : r.markers) {
    EXPECT_EQ(m.process_id, pid);
    EXPECT_NE(m.thread_id, 0u);
  }

  std::ostringstream out;
  const TimelineSummary t = write_timeline(out, {{"sdpa-prof run", pid, device.name, 0, {&r}}});
  EXPECT_FALSE(t.truncated);
  EXPECT_EQ(t.kernels, r.kernels.size());
  EXPECT_EQ(t.flows, r.kernels.size() + r.memcpys.size() + r.memsets.size());
  EXPECT_EQ(t.ranges, static_cast<uint64_t>(kProfileForwards));
}

}  // namespace
}  // namespace sdpa
