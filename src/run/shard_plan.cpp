#include "run/shard_plan.h"

#include <algorithm>
#include <numeric>

#include "run/runner.h"

namespace sdpa {
namespace {

constexpr double kFixedCaseSeconds = 1.5;     // setup, reference check, profile passes, timing floor
constexpr double kTimedForwards = 300;         // warm-up, profile, counter passes and samples
constexpr double kNominalFlopsPerSecond = 400e12;
constexpr double kNominalBytesPerSecond = 2.5e12;
constexpr double kCasesPerEveryVariantChoice = 6;  // flash3's schedules; cuDNN lists more or fewer

}  // namespace

double predicted_case_seconds(const Problem& problem, const BackendChoice& choice) {
  const double bytes = static_cast<double>(predicted_case_bytes(problem, *choice.entry));
  const double forward = std::max(problem.flops() / kNominalFlopsPerSecond, bytes / kNominalBytesPerSecond);
  const double one = kFixedCaseSeconds + kTimedForwards * forward;
  return choice.every_variant ? one * kCasesPerEveryVariantChoice : one;
}

std::vector<int> assign_shards(const SweepPlan& plan, int count) {
  const std::size_t choices = plan.backends.size();
  const std::size_t cases = plan.problems.size() * choices;
  std::vector<double> cost(cases);
  for (std::size_t i = 0; i < cases; ++i)
    cost[i] = predicted_case_seconds(plan.problems[i / choices], plan.backends[i % choices]);
  std::vector<std::size_t> order(cases);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<double> load(static_cast<std::size_t>(count), 0.0);
  std::vector<int> shard(cases, 1);
  for (const std::size_t i : order) {
    const auto least = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    shard[i] = static_cast<int>(least) + 1;
    load[least] += cost[i];
  }
  return shard;
}

}  // namespace sdpa
