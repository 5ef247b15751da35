// Hardware counters of a kernel, read by CUPTI's range profiler: metric names as CUPTI spells
// them, the role each plays in the reports, and what a forward's counters add up to.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sdpa {

struct CaseProfile;

// What a metric tells the reports; one role may have a different name per chip.
enum class CounterRole {
  achieved_occupancy,  // % of the SM's warp slots active, while the SM was active
  dram_read_bytes,
  dram_write_bytes,
  dram_throughput,  // % of peak DRAM bandwidth over the kernel's elapsed cycles
  tensor_active,    // % of elapsed cycles the tensor pipes were busy
  sm_throughput,    // % of the SM's peak sustained rate (speed of light)
  l2_hit_rate,      // % of L2 sector lookups that hit
  duration_ns,
};

struct CounterMetric {
  CounterRole role;
  std::string_view name;  // "dram__bytes_read.sum"
  std::string_view chip;  // the chip this name is for ("GH100"); empty: every chip
};

// Every metric name sdpa-prof asks for, per role, chip-specific names before the generic ones.
const std::vector<CounterMetric>& counter_metric_table();
std::string_view counter_role_id(CounterRole role);  // "achieved_occupancy", ...

// A kernel's value for `role` under whichever of the role's names it was recorded with.
std::optional<double> counter_value(const std::map<std::string, double>& counters,
                                    CounterRole role);

// How the counter pass of a case ran.
struct CounterSource {
  std::string api;     // "CUPTI range profiler (auto range, user replay, ...), API 130001"
  std::string chip;    // "GH100"
  int passes = 0;      // forwards (replays) the metric set needs
  double wall_ms = 0;  // the counter pass's own host time
  std::vector<std::string> unavailable;  // metric names this GPU could not give
  // The bytes the backend's own count says a forward's kernels must move through DRAM (none
  // when the backend gives no count).
  std::optional<double> expected_dram_bytes;
};

// Measured DRAM bytes (read + write) of one forward: none without DRAM counters.
std::optional<double> dram_bytes_per_forward(const CaseProfile& profile);

// Whether a forward spends its kernel time nearer the DRAM or the compute ceiling: kernel-time
// weighted DRAM throughput % against SM throughput %.
enum class Bound { dram, compute };
struct ForwardBound {
  Bound bound = Bound::compute;
  double dram_pct = 0;
  double sm_pct = 0;
};
std::optional<ForwardBound> forward_bound(const CaseProfile& profile);
const char* bound_name(Bound b);  // "DRAM-bound", "compute-bound"

}  // namespace sdpa
