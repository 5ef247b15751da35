// The sampling loop with a test double for the clock probe: throttled samples are dropped and
// counted, and a case whose every sample ran throttled says so everywhere it is read.
#include <gtest/gtest.h>

#include "compare/comparison.h"
#include "measure/timing.h"
#include "model/clocks.h"

namespace sdpa {
namespace {

constexpr double kPeakMhz = 1980;

TimingOptions quick_options() {
  TimingOptions o;
  o.stopping.min_samples = 5;
  o.stopping.min_time_s = 0;
  o.stopping.timeout_s = 0.02;
  o.stopping.max_noise = 0.5;
  return o;
}

// Samples of 1 ms (and a little noise); every `throttled_every`-th one at `low_mhz`, the rest at the peak.
std::function<TimedSample()> probe_double(int throttled_every, double low_mhz) {
  return [throttled_every, low_mhz, i = 0]() mutable {
    ++i;
    const double ms = 1.0 + 0.001 * (i % 3);
    const bool low = throttled_every > 0 && i % throttled_every == 0;
    return TimedSample{low ? 2 * ms : ms, low ? low_mhz : kPeakMhz};
  };
}

TEST(Sampling, ThrottledSamplesAreDroppedAndCounted) {
  const TimingStats t = collect_samples(probe_double(2, 1000), quick_options(), kPeakMhz);
  EXPECT_FALSE(t.all_throttled);
  EXPECT_GT(t.throttled_dropped, 0);
  EXPECT_LT(t.median_ms, 1.5) << "the throttled samples (2 ms) are not among the times";
  EXPECT_DOUBLE_EQ(t.sm_clock_mhz, kPeakMhz);
  EXPECT_TRUE(clock_findings(t).empty());
}

TEST(Sampling, EveryThrottledSampleIsAnUntrustedCaseWithItsClockFindingAndMarker) {
  const TimingStats t = collect_samples(probe_double(1, 1000), quick_options(), kPeakMhz);
  EXPECT_TRUE(t.all_throttled);
  EXPECT_FALSE(t.converged);
  EXPECT_GT(t.samples, 0);
  EXPECT_DOUBLE_EQ(t.sm_clock_mhz, 1000);
  EXPECT_DOUBLE_EQ(t.sm_clock_peak_mhz, kPeakMhz);
  const std::vector<Finding> findings = clock_findings(t);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].rule, "low-clock");
  EXPECT_NE(findings[0].text.find("median SM clock 1000 MHz"), std::string::npos) << findings[0].text;
  EXPECT_NE(findings[0].text.find("ran throttled"), std::string::npos) << findings[0].text;
  EXPECT_EQ(clock_marker(t), 'c');
}

CaseResult case_timed(const TimingStats& t) {
  CaseResult c;
  c.backend = "flash";
  c.problem.batch = c.problem.heads = c.problem.kv_heads = 1;
  c.problem.seq_q = c.problem.seq_kv = 1024;
  c.status = CaseStatus::ok;
  c.timing = t;
  return c;
}

RunReport run_of(const TimingStats& t) {
  RunReport r;
  r.cases = {case_timed(t)};
  return r;
}

TEST(Sampling, CompareDoesNotTrustAnAllThrottledCase) {
  const TimingStats good = collect_samples(probe_double(0, 0), quick_options(), kPeakMhz);
  const TimingStats throttled = collect_samples(probe_double(1, 1000), quick_options(), kPeakMhz);
  ASSERT_FALSE(good.all_throttled);
  for (const auto& [base, next] : {std::pair{good, throttled}, std::pair{throttled, good}}) {
    const Comparison c = compare_reports(run_of(base), run_of(next), 0.05, false);
    ASSERT_EQ(c.cases.size(), 1u);
    EXPECT_EQ(c.cases[0].verdict, Verdict::not_comparable);
    EXPECT_NE(c.cases[0].note.find("ran throttled"), std::string::npos) << c.cases[0].note;
    EXPECT_FALSE(c.any_regression());
    EXPECT_TRUE(compare_reports(run_of(base), run_of(next), 0.05, true).any_regression()) << "--strict-clock";
  }
}

}  // namespace
}  // namespace sdpa
