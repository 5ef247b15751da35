#include "profile/counter_metrics.h"

#include <algorithm>

#include <fmt/format.h>

namespace sdpa {

std::string_view base_metric_name(std::string_view metric) {
  return metric.substr(0, metric.find('.'));
}

MetricChoice choose_metrics(std::string_view chip,
                            const std::set<std::string, std::less<>>& base_metrics) {
  MetricChoice choice;
  std::vector<CounterRole> roles;
  for (const CounterMetric& m : counter_metric_table())
    if (std::find(roles.begin(), roles.end(), m.role) == roles.end()) roles.push_back(m.role);
  for (const CounterRole role : roles) {
    std::string chosen;
    std::vector<std::string_view> tried;
    for (const CounterMetric& m : counter_metric_table()) {
      if (m.role != role || (!m.chip.empty() && m.chip != chip)) continue;
      if (std::find(tried.begin(), tried.end(), m.name) != tried.end()) continue;
      tried.push_back(m.name);
      if (base_metrics.contains(base_metric_name(m.name))) {
        chosen = m.name;
        break;
      }
    }
    if (!chosen.empty()) {
      choice.metrics.push_back(chosen);
    } else {
      choice.unavailable.push_back(
          fmt::format("{} ({})", counter_role_id(role), fmt::join(tried, ", ")));
    }
  }
  return choice;
}

}  // namespace sdpa
