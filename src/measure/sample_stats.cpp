#include "measure/sample_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace sdpa {
namespace {

// Linear interpolation between order statistics (the common "type 7" quantile).
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

SampleStats summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const auto n = static_cast<double>(samples.size());
  SampleStats s;
  s.count = static_cast<int>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.median = quantile(samples, 0.5);
  s.q1 = quantile(samples, 0.25);
  s.q3 = quantile(samples, 0.75);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  // Distribution-free CI of the median: ranks n/2 -+ 1.96 sqrt(n)/2 (binomial approximation).
  const double half_ranks = 1.96 * std::sqrt(n) / 2.0;
  const double lo = quantile(samples, std::max(0.0, 0.5 - half_ranks / n));
  const double hi = quantile(samples, std::min(1.0, 0.5 + half_ranks / n));
  s.relative_spread = s.median > 0 ? (hi - lo) / (2.0 * s.median) : 0.0;
  return s;
}

StopDecision should_stop(const StoppingRule& rule, const std::vector<double>& samples, double elapsed_s) {
  const int n = static_cast<int>(samples.size());
  if (n >= rule.min_samples && elapsed_s >= rule.min_time_s &&
      summarize(samples).relative_spread < rule.max_noise)
    return StopDecision::converged;
  if (elapsed_s >= rule.timeout_s || n >= rule.max_samples) return StopDecision::timed_out;
  return StopDecision::keep_going;
}

}  // namespace sdpa
