#include <gtest/gtest.h>

#include <random>

#include "measure/sample_stats.h"

namespace sdpa {
namespace {

TEST(SampleStats, QuantilesOfAKnownSet) {
  const SampleStats s = summarize({5, 1, 4, 2, 3});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.q1, 2);
  EXPECT_DOUBLE_EQ(s.q3, 4);
}

TEST(SampleStats, EvenCountInterpolatesTheMedian) { EXPECT_DOUBLE_EQ(summarize({1, 2, 3, 4}).median, 2.5); }

TEST(SampleStats, IdenticalSamplesHaveNoSpread) {
  EXPECT_DOUBLE_EQ(summarize(std::vector<double>(50, 1.25)).relative_spread, 0.0);
}

TEST(SampleStats, SpreadShrinksWithMoreSamples) {
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(1.0, 0.02);
  std::vector<double> samples;
  for (int i = 0; i < 20; ++i) samples.push_back(noise(rng));
  const double few = summarize(samples).relative_spread;
  for (int i = 0; i < 2000; ++i) samples.push_back(noise(rng));
  const double many = summarize(samples).relative_spread;
  EXPECT_GT(few, 0.005);
  EXPECT_LT(many, few / 5);
  // 2% noise: the median's 95% interval after 2020 samples is about +-0.1%.
  EXPECT_NEAR(many, 0.0011, 0.0005);
}

TEST(StoppingRule, NeedsMinimumSamplesAndTime) {
  StoppingRule rule;
  const std::vector<double> steady(rule.min_samples - 1, 1.0);
  EXPECT_EQ(should_stop(rule, steady, 10.0), StopDecision::keep_going);
  const std::vector<double> enough(rule.min_samples, 1.0);
  EXPECT_EQ(should_stop(rule, enough, rule.min_time_s / 2), StopDecision::keep_going);
  EXPECT_EQ(should_stop(rule, enough, rule.min_time_s), StopDecision::converged);
}

TEST(StoppingRule, NoisyStreamsRunUntilTheTimeout) {
  StoppingRule rule;
  std::vector<double> noisy;
  for (int i = 0; i < 40; ++i) noisy.push_back(i % 2 == 0 ? 1.0 : 2.0);
  EXPECT_EQ(should_stop(rule, noisy, 1.0), StopDecision::keep_going);
  EXPECT_EQ(should_stop(rule, noisy, rule.timeout_s), StopDecision::timed_out);
}

TEST(StoppingRule, ConvergesOnASteadySyntheticStream) {
  StoppingRule rule;
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(2.0, 0.02);  // 1% noise, 2 ms samples
  std::vector<double> samples;
  double elapsed = 0;
  StopDecision d = StopDecision::keep_going;
  while (d == StopDecision::keep_going) {
    samples.push_back(noise(rng));
    elapsed += samples.back() * 1e-3;
    d = should_stop(rule, samples, elapsed);
  }
  EXPECT_EQ(d, StopDecision::converged);
  EXPECT_GE(elapsed, rule.min_time_s);
  EXPECT_LT(summarize(samples).relative_spread, rule.max_noise);
}

}  // namespace
}  // namespace sdpa
