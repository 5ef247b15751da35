// --launch graph on the GPU: every built backend's call captured into a CUDA graph either verifies
// (what a replay wrote, against the reference) or is skipped with a reason, and the profile of a
// graph case shows the kernels of each replay, attributed to its cudaGraphLaunch.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <random>

#include <fmt/format.h>

#include "gpu_test_support.h"
#include "model/nvtx_ranges.h"
#include "run/runner.h"

namespace sdpa {
namespace {

Problem graph_problem(int64_t seq, int64_t head_dim, DType dtype, bool causal, AttentionPass pass) {
  Problem p;
  p.batch = 2;
  p.heads = p.kv_heads = 2;
  p.seq_q = p.seq_kv = seq;
  p.head_dim = head_dim;
  p.dtype = dtype;
  p.causal = causal;
  p.pass = pass;
  p.launch = LaunchMode::graph;
  return p;
}

// Our own kernels, launched on the case's stream with nothing else: they must capture.
bool must_capture(std::string_view backend) {
  return backend == "flash" || backend == "efficient" || backend.starts_with("flash3");
}

TEST(GraphLaunch, EveryBackendVerifiesFromAReplayOrSaysWhy) {
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  const std::vector<Problem> problems{
      graph_problem(1000, 64, DType::bf16, true, AttentionPass::forward),
      graph_problem(17, 128, DType::fp16, false, AttentionPass::forward),
      graph_problem(1000, 64, DType::bf16, true, AttentionPass::forward_backward),
      graph_problem(17, 64, DType::bf16, false, AttentionPass::backward),
  };
  SweepPlan plan{problems, {}};
  for (const BackendEntry& e : backend_registry())
    if (e.built()) plan.backends.push_back({&e, false});
  const uint64_t seed = std::random_device{}();
  const std::vector<CaseResult> results = run_sweep(plan, device, seed, one_sample_timing()).cases;
  ASSERT_EQ(results.size(), problems.size() * plan.backends.size());
  for (const CaseResult& r : results) {
    SCOPED_TRACE(fmt::format("{} {} {} seed={}", r.backend, r.problem.shape_label(),
                             dtype_name(r.problem.dtype), seed));
    EXPECT_EQ(r.problem.launch, LaunchMode::graph);
    // For the GPU run's log: which backends capture, and why the others do not.
    std::cout << fmt::format("{:<14} {:<28} {:<5} {}{}\n", r.backend, r.problem.shape_label(),
                             dtype_name(r.problem.dtype), status_name(r.status),
                             r.reason.empty() ? "" : ": " + r.reason);
    if (r.status == CaseStatus::skipped) {
      EXPECT_FALSE(r.reason.empty());
      const BackendEntry& entry = *find_backend(r.backend);
      const bool declined = cannot_run(entry, r.problem, device).has_value();
      if (!declined) {
        EXPECT_NE(r.reason.find("CUDA graph"), std::string::npos) << r.reason;
        EXPECT_FALSE(must_capture(r.backend)) << r.reason;
      }
      continue;
    }
    ASSERT_EQ(r.status, CaseStatus::ok) << r.reason;
    ASSERT_TRUE(r.verification.has_value());
    EXPECT_TRUE(r.verification->passed);
    EXPECT_EQ(r.verification->non_finite, 0u);
    ASSERT_TRUE(r.host.has_value());
    EXPECT_GT(r.host->per_call_us, 0);
    EXPECT_TRUE(std::any_of(r.setup.times_ms.begin(), r.setup.times_ms.end(),
                            [](const auto& t) { return t.first == "graph capture"; }));
  }
}

// The same work either way: a graph case's profile has the eager case's launches per forward
// (a memset node may run as a kernel, so they are counted together), every one attributed, each
// kernel record naming its graph, and the launching call is cudaGraphLaunch.
TEST(GraphLaunch, TheProfileShowsEachReplaysKernels) {
  std::string why_not;
  const std::unique_ptr<CuptiSession> session = CuptiSession::start(why_not);
  SDPA_REQUIRE_LIBRARY(session, "cupti", why_not);
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  Problem eager = graph_problem(1000, 64, DType::bf16, true, AttentionPass::forward);
  eager.launch = LaunchMode::eager;
  const Problem graph = graph_problem(1000, 64, DType::bf16, true, AttentionPass::forward);
  SweepPlan plan{{eager, graph}, resolve_backends({"naive", "naive-inplace", "math", "flash"})};
  std::vector<CaseResult> cases;
  std::vector<ActivityRecords> records;
  SweepHooks hooks;
  hooks.on_case = [&](const CaseResult& c) { cases.push_back(c); };
  hooks.on_records = [&](const CaseResult&, ActivityRecords&& r) {
    records.push_back(std::move(r));
  };
  run_sweep(plan, device, std::random_device{}(), one_sample_timing(), hooks, {session.get()});
  ASSERT_EQ(cases.size(), 8u);
  const auto launches = [](const CaseProfile& p) {
    return p.kernels_per_forward() + p.memcpys_per_forward() + p.memsets_per_forward();
  };
  std::size_t profiled = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const CaseResult& e = cases[i];
    const CaseResult& g = cases[4 + i];
    SCOPED_TRACE(g.backend);
    ASSERT_EQ(e.status, CaseStatus::ok) << e.reason;
    if (g.status == CaseStatus::skipped) {
      std::cout << g.backend << " graph skipped: " << g.reason << "\n";
      EXPECT_NE(g.backend, "flash") << g.reason;
      continue;
    }
    ASSERT_EQ(g.status, CaseStatus::ok) << g.reason;
    ASSERT_TRUE(e.profile && g.profile);
    std::cout << fmt::format(
        "{:<14} launches per forward eager {:g} ({:g} kernels), graph {:g} ({:g} kernels); host us "
        "per call eager {:.1f}, graph {:.1f}\n",
        g.backend, launches(*e.profile), e.profile->kernels_per_forward(), launches(*g.profile),
        g.profile->kernels_per_forward(), e.host->per_call_us, g.host->per_call_us);
    EXPECT_EQ(launches(*g.profile), launches(*e.profile));
    EXPECT_EQ(g.profile->unattributed, 0u);
    EXPECT_EQ(g.profile->dropped_records, 0u);
    EXPECT_EQ(g.profile->forwards.size(), static_cast<std::size_t>(kProfileForwards));
    ++profiled;
  }
  EXPECT_GT(profiled, 0u);
  // records[] holds the profiled cases in the order they ran: the eager ones, then the graph ones.
  ASSERT_EQ(records.size(), 4 + profiled);
  for (std::size_t i = 4; i < records.size(); ++i) {
    const ActivityRecords& r = records[i];
    ASSERT_FALSE(r.kernels.empty());
    for (const KernelRecord& k : r.kernels) EXPECT_NE(k.place.graph_id, 0u) << k.name;
    const RangeTree tree = range_tree(r);
    ASSERT_FALSE(tree.launch_calls.empty());
    for (const ApiRecord* a : tree.launch_calls)
      EXPECT_TRUE(a->name.starts_with("cudaGraphLaunch") || a->name.starts_with("cuGraphLaunch"))
          << a->name;
  }
}

}  // namespace
}  // namespace sdpa
