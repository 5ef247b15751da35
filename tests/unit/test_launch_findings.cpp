// The launch findings on hand-made cases: an eager case whose host time per call exceeds its GPU
// time is launch-bound, a graph case is held against the eager case of its backend and problem,
// and nothing is said where the figures do not show it.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "profile/launch_findings.h"

namespace sdpa {
namespace {

CaseResult measured(const std::string& backend, LaunchMode launch, double host_us, double gpu_ms,
                    double kernels) {
  CaseResult c;
  c.backend = backend;
  c.problem.batch = 8;
  c.problem.heads = c.problem.kv_heads = 16;
  c.problem.seq_q = c.problem.seq_kv = 1024;
  c.problem.causal = true;
  c.problem.launch = launch;
  c.status = CaseStatus::ok;
  c.timing = TimingStats{};
  c.timing->median_ms = gpu_ms;
  c.host = HostCost{0, 0, host_us, 10};
  c.profile = CaseProfile{};
  c.profile->forwards.assign(3, ForwardProfile{});
  for (ForwardProfile& f : c.profile->forwards) f.kernels = static_cast<int>(kernels);
  return c;
}

std::optional<Finding> rule(const std::vector<Finding>& found, const std::string& name) {
  const auto it =
      std::find_if(found.begin(), found.end(), [&](const Finding& f) { return f.rule == name; });
  return it == found.end() ? std::nullopt : std::optional<Finding>(*it);
}

TEST(LaunchFindings, AnEagerCaseSlowerToLaunchThanToRunIsLaunchBound) {
  const std::vector<CaseResult> cases{measured("math", LaunchMode::eager, 180.0, 0.120, 20),
                                      measured("math", LaunchMode::graph, 4.5, 0.110, 20),
                                      measured("flash", LaunchMode::eager, 12.0, 0.157, 1)};
  const std::optional<Finding> bound = rule(launch_findings(cases[0], cases), "launch-bound");
  ASSERT_TRUE(bound.has_value());
  EXPECT_EQ(bound->text,
            "launch-bound: 180.0 us of CPU per call for 20 launches against 120.0 us of GPU time "
            "(median): called "
            "back to back, the CPU sets the pace; as a CUDA graph 4.5 us per call");
  EXPECT_TRUE(launch_findings(cases[2], cases).empty()) << "12 us to launch 157 us of work";
}

TEST(LaunchFindings, AGraphCaseIsHeldAgainstItsEagerCase) {
  const std::vector<CaseResult> cases{measured("naive", LaunchMode::eager, 40.0, 1.100, 5),
                                      measured("naive", LaunchMode::graph, 5.0, 1.078, 5)};
  const std::optional<Finding> g = rule(launch_findings(cases[1], cases), "graph-launch");
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->text,
            "CUDA graph: 5.0 us of CPU per call (one cudaGraphLaunch) against 40.0 us eager for 5 "
            "launches (8.0x); "
            "GPU time 1078.0 us against 1100.0 us eager (-2.0%)");
  EXPECT_TRUE(launch_findings(cases[0], cases).empty()) << "the eager case is not launch-bound";
}

TEST(LaunchFindings, NothingWithoutTheFigures) {
  CaseResult graph = measured("flash", LaunchMode::graph, 3.0, 0.150, 1);
  EXPECT_TRUE(launch_findings(graph, {graph}).empty()) << "no eager case to hold it against";
  CaseResult eager = measured("flash", LaunchMode::eager, 300.0, 0.150, 1);
  eager.host.reset();
  EXPECT_TRUE(launch_findings(eager, {eager, graph}).empty()) << "no host time";
  EXPECT_TRUE(launch_findings(graph, {eager, graph}).empty()) << "the eager case has no host time";
  CaseResult other_problem = measured("flash", LaunchMode::eager, 10.0, 0.150, 1);
  other_problem.problem.seq_q = other_problem.problem.seq_kv = 4096;
  EXPECT_TRUE(launch_findings(graph, {other_problem, graph}).empty())
      << "another problem's eager case";
  CaseResult skipped = graph;
  skipped.status = CaseStatus::skipped;
  EXPECT_TRUE(launch_findings(skipped, {eager, skipped}).empty());
}

TEST(LaunchFindings, AddedOnceWhateverTheCalls) {
  std::vector<CaseResult> cases{measured("torch:math", LaunchMode::eager, 250.0, 0.2, 20),
                                measured("torch:math", LaunchMode::graph, 8.0, 0.19, 20)};
  add_launch_findings(cases);
  add_launch_findings(cases);
  EXPECT_EQ(cases[0].profile->findings.size(), 1u);
  EXPECT_EQ(cases[1].profile->findings.size(), 1u);
  EXPECT_EQ(cases[0].profile->findings[0].rule, "launch-bound");
  EXPECT_EQ(cases[1].profile->findings[0].rule, "graph-launch");
}

}  // namespace
}  // namespace sdpa
