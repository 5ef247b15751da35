#include "model/sweep.h"

#include <algorithm>

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
  if (!p.sizes_in_range())
    throw InputError(
        fmt::format("{}: more than 2^53 elements in one tensor, beyond any GPU", p.shape_label()));
  if (p.heads % p.kv_heads != 0)
    throw InputError(fmt::format("kv-heads {} must divide heads {}", p.kv_heads, p.heads));
}

}  // namespace

std::vector<AxisValue> SweepConfig::values_of(const AxisSpec& axis) const {
  std::vector<AxisValue> out;
  const auto given = axes.find(axis.name);
  for (const AxisValue& v : given != axes.end() ? given->second : axis.defaults)
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

std::vector<Problem> expand_problems(const SweepConfig& c, const std::vector<AxisSpec>& axes) {
  check_settings(c);
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
