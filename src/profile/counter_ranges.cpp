#include "profile/counter_ranges.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

namespace sdpa {

std::string attach_counters(CaseProfile& profile, const std::vector<std::string>& metrics,
                            const std::vector<RangeValues>& ranges) {
  if (ranges.size() != profile.launch_order.size())
    return fmt::format("the counter pass saw {} kernel launches, the profiled forward {}",
                       ranges.size(), profile.launch_order.size());
  struct Sum {
    double total = 0;
    int count = 0;
  };
  std::vector<std::map<std::string, Sum>> sums(profile.kernels.size());
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    const std::size_t kernel = profile.launch_order[r];
    if (kernel >= profile.kernels.size())
      return fmt::format("launch {} names kernel {}, of {}", r, kernel, profile.kernels.size());
    if (ranges[r].size() != metrics.size())
      return fmt::format("range {} has {} values for {} metrics", r, ranges[r].size(),
                         metrics.size());
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      if (!std::isfinite(ranges[r][m])) continue;
      Sum& s = sums[kernel][metrics[m]];
      s.total += ranges[r][m];
      ++s.count;
    }
  }
  for (std::size_t k = 0; k < profile.kernels.size(); ++k) {
    profile.kernels[k].counters.clear();
    for (const auto& [name, s] : sums[k]) profile.kernels[k].counters[name] = s.total / s.count;
  }
  return {};
}

}  // namespace sdpa
