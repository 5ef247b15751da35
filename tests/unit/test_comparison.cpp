#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "compare/comparison.h"
#include "report/report.h"

namespace sdpa {
namespace {

Problem shape(int64_t s) {
  Problem p;
  p.batch = 8;
  p.heads = 16;
  p.kv_heads = 16;
  p.seq_q = p.seq_kv = s;
  p.causal = true;
  return p;
}

CaseResult timed(const std::string& backend, int64_t s, double median, double spread) {
  CaseResult c;
  c.backend = backend;
  c.problem = shape(s);
  c.status = CaseStatus::ok;
  TimingStats t;
  t.samples = 20;
  t.median_ms = median;
  t.min_ms = median * (1 - spread);
  t.max_ms = median * (1 + spread);
  c.timing = t;
  return c;
}

RunReport run_of(std::vector<CaseResult> cases, const std::string& device = "NVIDIA H200") {
  RunReport r;
  DeviceInfo d;
  d.name = device;
  d.driver_version = 13000;
  r.environment.device = d;
  r.cases = std::move(cases);
  return r;
}

const CaseComparison& only(const Comparison& c) {
  EXPECT_EQ(c.cases.size(), 1u);
  return c.cases.front();
}

TEST(Comparison, SmallChangesAreTheSame) {
  const auto c = compare_reports(run_of({timed("flash", 1024, 1.0, 0.001)}),
                                 run_of({timed("flash", 1024, 1.049, 0.001)}), 0.05);
  EXPECT_EQ(only(c).verdict, Verdict::same);
  EXPECT_FALSE(c.any_regression());
}

TEST(Comparison, ThresholdEdges) {
  // Exactly at the threshold counts as a change; just under does not.
  EXPECT_EQ(only(compare_reports(run_of({timed("naive", 64, 1.0, 0)}), run_of({timed("naive", 64, 1.05, 0)}), 0.05)).verdict,
            Verdict::slower);
  EXPECT_EQ(only(compare_reports(run_of({timed("naive", 64, 1.0, 0)}), run_of({timed("naive", 64, 1.0499, 0)}), 0.05)).verdict,
            Verdict::same);
}

TEST(Comparison, SlowerBeyondNoiseIsARegression) {
  const auto c = compare_reports(run_of({timed("naive", 1024, 1.0, 0.01)}),
                                 run_of({timed("naive", 1024, 1.2, 0.01)}), 0.05);
  EXPECT_EQ(only(c).verdict, Verdict::slower);
  EXPECT_TRUE(c.any_regression());
  EXPECT_NEAR(only(c).change, 0.2, 1e-12);
}

TEST(Comparison, ChangeInsideTheNoiseIsUnclear) {
  // +10% with +-8% and +-6% spreads: the runs overlap, so no verdict either way.
  const auto c = compare_reports(run_of({timed("math", 1024, 1.0, 0.08)}),
                                 run_of({timed("math", 1024, 1.1, 0.06)}), 0.05);
  EXPECT_EQ(only(c).verdict, Verdict::unclear);
  EXPECT_FALSE(c.any_regression());
}

TEST(Comparison, FasterIsNotARegression) {
  const auto c = compare_reports(run_of({timed("math", 1024, 2.0, 0.01)}),
                                 run_of({timed("math", 1024, 1.0, 0.01)}), 0.05);
  EXPECT_EQ(only(c).verdict, Verdict::faster);
  EXPECT_FALSE(c.any_regression());
}

TEST(Comparison, AFailedVerificationIsARegressionWhateverTheTime) {
  CaseResult failed = timed("naive", 1024, 0.5, 0.01);
  failed.status = CaseStatus::failed;
  failed.timing.reset();
  failed.reason = "verification failed";
  const auto c = compare_reports(run_of({timed("naive", 1024, 1.0, 0.01)}), run_of({failed}), 0.05);
  EXPECT_TRUE(only(c).regression);
  EXPECT_NE(only(c).note.find("verification failed"), std::string::npos);
}

TEST(Comparison, CasesOnlyInOneFileAreListed) {
  const auto c = compare_reports(run_of({timed("naive", 1024, 1.0, 0), timed("naive", 2048, 4.0, 0)}),
                                 run_of({timed("naive", 1024, 1.0, 0), timed("math", 1024, 3.0, 0)}), 0.05);
  ASSERT_EQ(c.cases.size(), 3u);
  EXPECT_EQ(c.cases[1].verdict, Verdict::only_in_new);
  EXPECT_EQ(c.cases[2].verdict, Verdict::only_in_base);
  EXPECT_FALSE(c.any_regression());
}

// A graph case is compared with the graph case of the baseline, never with the eager one; a
// baseline from before the launch axis holds eager cases only.
TEST(Comparison, AGraphCaseMeetsItsOwnLaunch) {
  CaseResult graph = timed("naive", 1024, 0.5, 0);
  graph.problem.launch = LaunchMode::graph;
  CaseResult slower_graph = graph;
  slower_graph.timing->median_ms = 1.0;
  const auto c = compare_reports(run_of({timed("naive", 1024, 1.0, 0), graph}),
                                 run_of({timed("naive", 1024, 1.0, 0), slower_graph}), 0.05);
  ASSERT_EQ(c.cases.size(), 2u);
  EXPECT_EQ(c.cases[0].verdict, Verdict::same);
  EXPECT_EQ(c.cases[1].verdict, Verdict::slower);
  const auto before = compare_reports(run_of({timed("naive", 1024, 1.0, 0)}), run_of({graph}), 0.05);
  ASSERT_EQ(before.cases.size(), 2u);
  EXPECT_EQ(before.cases[0].verdict, Verdict::only_in_new);
  EXPECT_EQ(before.cases[1].verdict, Verdict::only_in_base);
}

TEST(Comparison, DeviceMismatchIsNamed) {
  const auto c = compare_reports(run_of({timed("naive", 64, 1.0, 0)}, "NVIDIA A100-SXM4-80GB"),
                                 run_of({timed("naive", 64, 1.0, 0)}, "NVIDIA H100 80GB HBM3"), 0.05);
  ASSERT_EQ(c.environment_differences.size(), 1u);
  EXPECT_EQ(c.environment_differences[0], "device: NVIDIA A100-SXM4-80GB -> NVIDIA H100 80GB HBM3");
  EXPECT_NE(format_comparison_markdown(c).find("environment differs"), std::string::npos);
}

TEST(Comparison, MarkdownAndJsonCarryTheVerdicts) {
  const auto c = compare_reports(run_of({timed("naive", 1024, 1.0, 0)}), run_of({timed("naive", 1024, 1.3, 0)}), 0.05);
  EXPECT_EQ(format_comparison_markdown(c),
            "### sdpa-prof: 1 regression in 1 cases (threshold 5.0%)\n\n"
            "| backend | shape | dtype | causal | base ms | new ms | change | noise | verdict |\n"
            "|---|---|---|---|---:|---:|---:|---:|---|\n"
            "| naive | B8 H16 S1024 D64 | bf16 | yes | 1.000 | 1.300 | +30.0% | 0.0% | **regression** (slower) |\n");
  const nlohmann::json j = comparison_to_json(c);
  EXPECT_TRUE(j["regression"].get<bool>());
  EXPECT_EQ(j["cases"][0]["verdict"], "slower");
}

TEST(Comparison, RegressionsInRedFasterInGreenOnlyWithColour) {
  const auto c = compare_reports(run_of({timed("naive", 1024, 1.0, 0), timed("math", 1024, 3.0, 0)}),
                                 run_of({timed("naive", 1024, 1.3, 0), timed("math", 1024, 2.0, 0)}), 0.05);
  const std::string coloured = format_comparison_table(c, TextStyle{100, true});
  EXPECT_NE(coloured.find("\x1b[1;31mREGRESSION (slower)\x1b[0m"), std::string::npos) << coloured;
  EXPECT_NE(coloured.find("\x1b[32mfaster\x1b[0m"), std::string::npos) << coloured;
  EXPECT_NE(coloured.find("\x1b[1;31m2 cases, 1 regressions"), std::string::npos) << coloured;
  EXPECT_EQ(format_comparison_table(c, TextStyle{100, false}).find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace sdpa

namespace sdpa {
namespace {

CaseProfile launches(int kernels, int memcpys) {
  CaseProfile p;
  ForwardProfile f;
  f.kernels = kernels;
  f.memcpys = memcpys;
  p.forwards = {f, f};
  return p;
}

TEST(Comparison, AFusedBackendThatSplitsIsARegressionEvenWhenFaster) {
  CaseResult base = timed("flash", 4096, 1.0, 0.001);
  CaseResult next = timed("flash", 4096, 0.9, 0.001);
  base.profile = launches(1, 0);
  next.profile = launches(2, 0);
  const auto c = compare_reports(run_of({base}), run_of({next}), 0.05);
  EXPECT_TRUE(only(c).regression);
  EXPECT_EQ(only(c).note, "kernels per forward 1 -> 2 (no longer one fused kernel)");
}

TEST(Comparison, ANewMemcpyIsARegressionEvenWhenTheTimeIsTheSame) {
  CaseResult base = timed("naive-inplace", 1024, 1.0, 0.001);
  CaseResult next = timed("naive-inplace", 1024, 1.0, 0.001);
  base.profile = launches(5, 0);
  next.profile = launches(5, 1);
  const auto c = compare_reports(run_of({base}), run_of({next}), 0.05);
  EXPECT_TRUE(only(c).regression);
  EXPECT_EQ(only(c).note, "memcpys per forward 0 -> 1");
}

TEST(Comparison, FewerLaunchesAreNotARegression) {
  CaseResult base = timed("math", 1024, 1.0, 0.001);
  CaseResult next = timed("math", 1024, 1.0, 0.001);
  base.profile = launches(20, 0);
  next.profile = launches(18, 0);
  EXPECT_FALSE(compare_reports(run_of({base}), run_of({next}), 0.05).any_regression());
}

}  // namespace
}  // namespace sdpa

namespace sdpa {
namespace {

RunReport recorded(const std::string& name) {
  std::ifstream in(std::string(SDPA_SOURCE_DIR "/tests/data/") + name);
  return report_from_json(nlohmann::json::parse(in));
}

const CaseComparison& case_of(const Comparison& c, const std::string& backend) {
  const auto it = std::find_if(c.cases.begin(), c.cases.end(), [&](const CaseComparison& k) { return k.backend == backend; });
  EXPECT_NE(it, c.cases.end()) << backend;
  return *it;
}

CaseResult clocked(const std::string& backend, double median, double clock_mhz) {
  CaseResult c = timed(backend, 4096, median, 0.001);
  c.timing->relative_spread = 0.001;
  c.timing->sm_clock_mhz = clock_mhz;
  c.timing->sm_clock_peak_mhz = 1980;
  return c;
}

// The H200 run of flash, efficient and cuDNN at S4096 D128, against the same run with flash at a 12% lower
// SM clock and its times longer by just what the clock explains (a hotter runner).
TEST(ComparisonClocks, ARecordedSlowdownExplainedByTheClockIsNotARegression) {
  const RunReport base = recorded("result-h200-d128.json");
  const RunReport hot = recorded("result-h200-d128-flash-clock-12pct-lower.json");
  const Comparison c = compare_reports(base, hot, 0.05);
  const CaseComparison& flash = case_of(c, "flash");
  EXPECT_EQ(flash.verdict, Verdict::slower_clock);
  EXPECT_FALSE(flash.regression);
  EXPECT_NEAR(flash.change, 0.136, 0.001);
  ASSERT_TRUE(flash.clock_change.has_value());
  EXPECT_NEAR(*flash.clock_change, -0.12, 0.001);
  EXPECT_NEAR(*flash.change_at_equal_clock, 0.0, 1e-9);
  EXPECT_EQ(verdict_text(flash), "slower, clock -12%");
  EXPECT_EQ(flash.note, "SM clock 1960 -> 1725 MHz (-12%), at equal clocks +0.0% (estimate)");
  EXPECT_EQ(case_of(c, "cudnn").verdict, Verdict::same);
  EXPECT_FALSE(c.any_regression());
  EXPECT_NE(format_comparison_table(c).find("slower, clock -12%: SM clock 1960 -> 1725 MHz"), std::string::npos);
  EXPECT_NE(format_comparison_table(c).find("not a regression (--strict-clock makes it one)"), std::string::npos);
  EXPECT_NEAR(comparison_to_json(c)["cases"][0]["clock_change"].get<double>(), -0.12, 0.001);
}

TEST(ComparisonClocks, StrictClockMakesItARegressionAnyway) {
  const Comparison c = compare_reports(recorded("result-h200-d128.json"),
                                       recorded("result-h200-d128-flash-clock-12pct-lower.json"), 0.05, true);
  EXPECT_EQ(case_of(c, "flash").verdict, Verdict::slower_clock);
  EXPECT_TRUE(case_of(c, "flash").regression);
  EXPECT_NE(format_comparison_table(c).find("REGRESSION (slower, clock -12%)"), std::string::npos);
}

TEST(ComparisonClocks, ASlowdownBeyondWhatTheClockExplainsIsARegression) {
  // 20% slower at a 5% lower clock: +14% at equal clocks.
  const auto c = compare_reports(run_of({clocked("flash", 1.0, 1940)}), run_of({clocked("flash", 1.2, 1843)}), 0.05);
  EXPECT_EQ(only(c).verdict, Verdict::slower);
  EXPECT_TRUE(only(c).regression);
  EXPECT_NE(only(c).note.find("at equal clocks +14.0% (estimate)"), std::string::npos) << only(c).note;
}

TEST(ComparisonClocks, AHigherClockExplainsNothingAway) {
  const auto c = compare_reports(run_of({clocked("flash", 1.0, 1700)}), run_of({clocked("flash", 1.1, 1940)}), 0.05);
  EXPECT_EQ(only(c).verdict, Verdict::slower);
  EXPECT_TRUE(only(c).regression);
}

TEST(ComparisonClocks, WithoutClocksInBothRunsItIsAPlainVerdict) {
  const auto c = compare_reports(run_of({clocked("flash", 1.0, 0)}), run_of({clocked("flash", 1.14, 1725)}), 0.05);
  EXPECT_EQ(only(c).verdict, Verdict::slower);
  EXPECT_FALSE(only(c).clock_change.has_value());
  EXPECT_TRUE(only(c).note.empty());
}

}  // namespace
}  // namespace sdpa
