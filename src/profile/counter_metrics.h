// Which metric names the counter pass asks a chip for: one per role from the per-chip table,
// checked against the chip's base metrics (what cuptiProfilerHostGetBaseMetrics lists).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "model/counters.h"

namespace sdpa {

// "dram__bytes_read.sum" -> "dram__bytes_read": the name without its rollup and submetric.
std::string_view base_metric_name(std::string_view metric);

struct MetricChoice {
  std::vector<std::string> metrics;  // to collect, one per role that the chip can give
  std::vector<std::string>
      unavailable;  // the roles' names the chip lacks ("tensor_active: sm__pipe_...")
};

// Per role, the first name of counter_metric_table() meant for `chip` (or for every chip)
// whose base metric the chip has.
MetricChoice choose_metrics(std::string_view chip,
                            const std::set<std::string, std::less<>>& base_metrics);

}  // namespace sdpa
