// Every built backend against the reference on fresh random inputs, odd sizes included, and every
// variant of the backends that have them (flash3's schedules, cuDNN's engine configs). Each test
// counts the cases it verified per backend against what that backend must run on this device.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include <fmt/format.h>

#include "backends/cudnn.h"
#include "backends/flash3.h"
#include "gpu_test_support.h"
#include "run/runner.h"

namespace sdpa {
namespace {

uint64_t fresh_seed() { return std::random_device{}(); }

Problem problem(int64_t batch, int64_t heads, int64_t kv_heads, int64_t sq, int64_t skv, int64_t d, DType dtype,
                bool causal) {
  Problem p;
  p.batch = batch;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.seq_q = sq;
  p.seq_kv = skv;
  p.head_dim = d;
  p.dtype = dtype;
  p.causal = causal;
  return p;
}

std::vector<Problem> correctness_problems() {
  std::vector<Problem> problems;
  for (const DType dtype : {DType::bf16, DType::fp16})
    for (const bool causal : {false, true})
      for (const int64_t d : {64, 128})
        for (const int64_t s : {1, 17, 1000, 1024, 4097}) problems.push_back(problem(2, 2, 2, s, s, d, dtype, causal));
  return problems;
}

// Grouped-query attention and Sq != Skv in both directions.
std::vector<Problem> uneven_problems() {
  std::vector<Problem> problems;
  for (const bool causal : {false, true})
    for (const auto& [sq, skv] : {std::pair<int64_t, int64_t>{17, 1000}, {1000, 17}, {127, 64}})
      for (const int64_t d : {64, 128}) problems.push_back(problem(1, 8, 2, sq, skv, d, DType::bf16, causal));
  return problems;
}

// Whether `backend` must run `p` (head dims 64 and 128, bf16 and fp16) on `device`: stated here,
// apart from the backends' own support checks, so that a check that declines too much (a library
// that failed to load) fails the test instead of skipping. cuDNN's fused backward refuses
// Sq = Skv = 1 on every version.
bool must_run(std::string_view backend, const DeviceInfo& device, const Problem& p) {
  if (backend.starts_with("flash3")) return device.arch() == 90;
  if (backend.starts_with("cudnn"))
    return !absence_expected("cudnn") && !(p.has_backward() && p.seq_q == 1 && p.seq_kv == 1);
  return true;
}

// "cudnn" for "cudnn[eng2.cfg32]" and for "cudnn:all" (a choice its backend declined whole).
std::string base_name(const std::string& case_name) { return case_name.substr(0, case_name.find_first_of("[:")); }

// Runs `plan` once; every case must verify or be declined by its backend for a reason this
// device explains. Returns the verified cases per case name.
std::map<std::string, int> verify_all(const SweepPlan& plan) {
  DeviceInfo device;
  std::string error;
  EXPECT_TRUE(query_device(0, device, error)) << error;
  const uint64_t seed = fresh_seed();
  const auto results = run_sweep(plan, device, seed, one_sample_timing()).cases;
  std::map<std::string, int> verified;
  for (const CaseResult& r : results) {
    SCOPED_TRACE(fmt::format("{} {} {} causal={} seed={}", r.backend, r.problem.shape_label(),
                             dtype_name(r.problem.dtype), r.problem.causal, seed));
    const BackendEntry& entry = *find_backend(base_name(r.backend));
    if (r.problem.has_backward() && !entry.has_backward()) {
      EXPECT_EQ(r.status, CaseStatus::skipped);
      EXPECT_EQ(r.reason, pass_unsupported(entry, r.problem).value_or("(none)"));
      continue;
    }
    if (!must_run(r.backend, device, r.problem)) {
      EXPECT_EQ(r.status, CaseStatus::skipped);
      const auto why = entry.unsupported(r.problem, device);
      EXPECT_TRUE(why.has_value());
      if (why) {
        EXPECT_EQ(r.reason, *why);
      }
      continue;
    }
    EXPECT_EQ(r.status, CaseStatus::ok) << r.reason;
    if (r.status != CaseStatus::ok || !r.verification) continue;
    EXPECT_TRUE(r.verification->passed);
    EXPECT_EQ(r.verification->non_finite, 0u);
    if (r.verification->passed && r.verification->non_finite == 0) ++verified[r.backend];
  }
  return verified;
}

void expect_every_backend_verified(const std::vector<Problem>& problems) {
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  SweepPlan plan{problems, {}};
  for (const BackendEntry& e : backend_registry())
    if (e.built()) plan.backends.push_back({&e, false});
  const std::map<std::string, int> verified = verify_all(plan);
  for (const BackendChoice& c : plan.backends) {
    const std::string name(c.entry->name);
    int want = 0;
    for (const Problem& p : problems) want += must_run(name, device, p) && (!p.has_backward() || c.entry->has_backward());
    EXPECT_EQ(verified.contains(name) ? verified.at(name) : 0, want) << name << ": cases verified";
  }
}

TEST(Backends, MatchReferenceOnOddAndEvenSizes) { expect_every_backend_verified(correctness_problems()); }

TEST(Backends, MatchReferenceWithGroupedHeadsAndUnequalLengths) { expect_every_backend_verified(uneven_problems()); }

// The backward alone and with its forward: dQ, dK and dV (and O) of every backend with a backward
// against the reference backward, at odd sizes, causal, grouped heads (dK and dV summed over the
// group) and Sq != Skv; a backend without one is skipped with its reason.
std::vector<Problem> backward_problems() {
  std::vector<Problem> problems;
  for (const DType dtype : {DType::bf16, DType::fp16})
    for (const bool causal : {false, true})
      for (const int64_t d : {64, 128})
        for (const int64_t s : {1, 17, 1000, 4097}) problems.push_back(problem(1, 2, 2, s, s, d, dtype, causal));
  for (const bool causal : {false, true})
    for (const auto& [sq, skv] : {std::pair<int64_t, int64_t>{17, 1000}, {1000, 17}, {127, 64}})
      for (const int64_t d : {64, 128}) problems.push_back(problem(1, 8, 2, sq, skv, d, DType::bf16, causal));
  for (std::size_t i = 0; i < problems.size(); ++i)
    problems[i].pass = i % 2 == 0 ? AttentionPass::backward : AttentionPass::forward_backward;
  return problems;
}

TEST(Backends, GradientsMatchReferenceOnOddSizes) { expect_every_backend_verified(backward_problems()); }

// A build with cuDNN must find it at run time: a libcudnn that fails to load would otherwise turn
// every cudnn case into a skip.
TEST(Backends, CudnnLoadsWhereTheBuildHasIt) {
  const BackendEntry& cudnn = cudnn_backend_entry();
  if (!cudnn.built()) GTEST_SKIP() << "built without cuDNN: " << cudnn.not_built_reason;
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  const auto why = cudnn.unsupported(problem(1, 1, 1, 64, 64, 64, DType::bf16, false), device);
  SDPA_REQUIRE_LIBRARY(!why.has_value(), "cudnn", why.value_or(""));
  EXPECT_GT(device.cudnn_version, 0u);
}

// Odd sizes for the variants: a single query, lengths off every tile, grouped heads with Sq != Skv,
// and non-causal grids whose persistent schedules split their last round along the keys.
std::vector<Problem> variant_problems() {
  return {
      problem(1, 2, 2, 1, 1, 64, DType::bf16, true),
      problem(2, 4, 2, 17, 1000, 64, DType::bf16, true),
      problem(2, 4, 4, 1000, 1000, 128, DType::fp16, true),
      problem(3, 4, 2, 300, 4097, 64, DType::bf16, false),
      problem(3, 4, 2, 300, 4097, 128, DType::fp16, false),
      problem(1, 2, 2, 4097, 4097, 128, DType::bf16, false),
  };
}

// Each case name `entry` lists over `problems` (NAME[variant]), with how many problems list it.
std::map<std::string, int> variants_listed(const BackendEntry& entry, const std::vector<Problem>& problems) {
  std::map<std::string, int> listed;
  for (const Problem& p : problems)
    for (const std::string& v : entry.variants(p)) ++listed[case_backend_name(entry, v)];
  return listed;
}

void expect_verified(const std::map<std::string, int>& listed, const std::map<std::string, int>& verified) {
  for (const auto& [name, count] : listed)
    EXPECT_EQ(verified.contains(name) ? verified.at(name) : 0, count) << name << ": cases verified";
}

TEST(Variants, EveryFlash3ScheduleMatchesTheReference) {
  const BackendEntry& flash3 = flash3_backend_entry();
  if (!flash3.built()) GTEST_SKIP() << "flash3 is not built: " << flash3.not_built_reason;
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  if (device.arch() != 90) GTEST_SKIP() << "flash3 runs on sm_90 only; this is sm_" << device.arch();
  const std::vector<Problem> problems = variant_problems();
  const std::map<std::string, int> verified = verify_all({problems, {{&flash3, true}}});
  // Six schedules on every problem, and the decode kernel on those of Sq <= 16.
  const std::map<std::string, int> listed = variants_listed(flash3, problems);
  EXPECT_EQ(listed.size(), 7u);
  expect_verified(listed, verified);
}

// flash3's backward after every schedule's forward, which writes the rows' LSE (a split tile's
// from its combined parts: the non-causal persistent grids of variant_problems split): dQ, dK, dV
// at odd sizes, grouped heads (4 / 2) with Sq != Skv both ways, D64 and D128, bf16 and fp16.
TEST(Variants, EveryFlash3ScheduleFeedsTheBackward) {
  const BackendEntry& flash3 = flash3_backend_entry();
  if (!flash3.built()) GTEST_SKIP() << "flash3 is not built: " << flash3.not_built_reason;
  ASSERT_TRUE(flash3.has_backward());
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  if (device.arch() != 90) GTEST_SKIP() << "flash3 runs on sm_90 only; this is sm_" << device.arch();
  std::vector<Problem> problems = variant_problems();
  problems.push_back(problem(2, 4, 2, 1000, 300, 128, DType::fp16, true));
  for (std::size_t i = 0; i < problems.size(); ++i)
    problems[i].pass = i % 2 == 0 ? AttentionPass::backward : AttentionPass::forward_backward;
  const std::map<std::string, int> verified = verify_all({problems, {{&flash3, true}}});
  // The six schedules: the decode kernel keeps no statistics for a backward.
  const std::map<std::string, int> listed = variants_listed(flash3, problems);
  EXPECT_EQ(listed.size(), 6u);
  expect_verified(listed, verified);
}

TEST(Variants, EveryCudnnEngineConfigMatchesTheReference) {
  const BackendEntry& cudnn = cudnn_backend_entry();
  if (!cudnn.built()) GTEST_SKIP() << "built without cuDNN: " << cudnn.not_built_reason;
  if (absence_expected("cudnn")) GTEST_SKIP() << "SDPA_TEST_EXPECT_ABSENT names cudnn";
  const std::vector<Problem> problems = variant_problems();
  const std::map<std::string, int> verified = verify_all({problems, {{&cudnn, true}}});
  int configs = 0;
  for (const Problem& p : problems) {
    SCOPED_TRACE(p.shape_label());
    const std::vector<std::string> names = cudnn.variants(p);
    EXPECT_FALSE(names.empty()) << "cuDNN proposed no engine config that finalizes";
    configs += static_cast<int>(names.size());
  }
  int total = 0;
  for (const auto& [name, count] : verified) total += count;
  EXPECT_EQ(total, configs) << "every engine config of every problem verified";
}

}  // namespace
}  // namespace sdpa
