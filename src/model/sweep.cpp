#include "model/sweep.h"

#include <algorithm>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "model/errors.h"

namespace sdpa {
namespace {

void check_settings(const SweepConfig& c) {
  if (c.warmup < 0) throw InputError(fmt::format("warmup must be >= 0, got {}", c.warmup));
  if (c.stopping.min_samples < 1)
    throw InputError(fmt::format("min-samples must be >= 1, got {}", c.stopping.min_samples));
  if (!(c.stopping.max_noise > 0))
    throw InputError(fmt::format("max-noise must be positive, got {}%", 100 * c.stopping.max_noise));
  if (!(c.stopping.min_time_s >= 0) || !(c.stopping.timeout_s >= c.stopping.min_time_s))
    throw InputError(fmt::format("need 0 <= min-time <= timeout, got {} s and {} s", c.stopping.min_time_s,
                                 c.stopping.timeout_s));
}

// Relations between axes that no single axis can check.
void check_problem(const Problem& p) {
  if (const std::string why = problem_error(p); !why.empty()) throw InputError(why);
}

}  // namespace

std::vector<AxisValue> SweepConfig::values_of(const AxisSpec& axis) const {
  std::vector<AxisValue> out;
  const auto given = axes.find(axis.name);
  std::set<AxisValue> seen;  // not a search of `out`: a list of 10^5 values would take minutes
  for (const AxisValue& v : given != axes.end() ? given->second : axis.defaults)
    if (seen.insert(v).second) out.push_back(v);
  return out;
}

void check_sweep_size(const SweepConfig& c, std::size_t cases_per_problem, const std::vector<AxisSpec>& axes) {
  // Saturating: ten axes of 10^4 values overflow 64 bits.
  const auto times = [](std::size_t a, std::size_t b) {
    return b != 0 && a > std::numeric_limits<std::size_t>::max() / b ? std::numeric_limits<std::size_t>::max() : a * b;
  };
  std::size_t cases = cases_per_problem;
  for (const AxisSpec& a : axes) cases = times(cases, std::max<std::size_t>(1, c.values_of(a).size()));
  if (cases > kMaxSweepCases)
    throw InputError(fmt::format("the sweep has {} cases, more than the {} run at once: give fewer values",
                                 cases == std::numeric_limits<std::size_t>::max() ? std::string("over 2^64")
                                                                                : std::to_string(cases),
                                 kMaxSweepCases));
}

std::vector<Problem> expand_problems(const SweepConfig& c, const std::vector<AxisSpec>& axes) {
  check_settings(c);
  check_sweep_size(c, 1, axes);
  for (const auto& [name, values] : c.axes) {
    if (find_axis(axes, name) == nullptr) throw InputError(fmt::format("unknown axis \"{}\"", name));
    if (values.empty()) throw InputError(fmt::format("{} needs at least one value", name));
  }
  // Axes that vary, slowest first; an axis that follows another takes its value per case.
  std::vector<const AxisSpec*> order;
  for (const AxisSpec& a : axes) order.push_back(&a);
  std::stable_sort(order.begin(), order.end(),
                   [](const AxisSpec* a, const AxisSpec* b) { return a->nesting < b->nesting; });
  std::vector<std::vector<AxisValue>> values;
  for (const AxisSpec* a : order) values.push_back(c.values_of(*a));

  std::vector<std::size_t> varying;  // positions in `order` of the axes that have values
  for (std::size_t i = 0; i < order.size(); ++i)
    if (!values[i].empty()) varying.push_back(i);

  std::vector<Problem> problems;
  std::vector<std::size_t> index(order.size(), 0);
  for (;;) {
    std::map<std::string, const AxisValue*> chosen;
    for (const std::size_t i : varying) chosen.emplace(order[i]->name, &values[i][index[i]]);
    Problem p;
    for (const AxisSpec* a : order) {
      auto it = chosen.find(a->name);
      if (it == chosen.end() && !a->follows.empty()) it = chosen.find(a->follows);
      if (it != chosen.end()) a->apply(p, *it->second);
    }
    check_problem(p);
    problems.push_back(p);
    // An odometer over the varying axes, the last one turning fastest.
    std::size_t k = varying.size();
    for (;;) {
      if (k == 0) return problems;
      const std::size_t i = varying[--k];
      if (++index[i] < values[i].size()) break;
      index[i] = 0;
    }
  }
}

}  // namespace sdpa
