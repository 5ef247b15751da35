#include "model/counters.h"

#include "model/profile.h"

namespace sdpa {

const std::vector<CounterMetric>& counter_metric_table() {
  // Hopper counts HMMA (mma.sync), HGMMA (wgmma) and QGMMA in one pipe counter; Ampere: HMMA.
  // Each metric name whole on its line, for grep.
  // clang-format off
  static const std::vector<CounterMetric> table{
      {CounterRole::achieved_occupancy, "sm__warps_active.avg.pct_of_peak_sustained_active", ""},
      {CounterRole::dram_read_bytes, "dram__bytes_read.sum", ""},
      {CounterRole::dram_write_bytes, "dram__bytes_write.sum", ""},
      {CounterRole::dram_throughput, "dram__throughput.avg.pct_of_peak_sustained_elapsed", ""},
      {CounterRole::tensor_active, "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_elapsed", "GH100"},
      {CounterRole::tensor_active, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed", "GA100"},
      {CounterRole::tensor_active, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed", ""},
      {CounterRole::sm_throughput, "sm__throughput.avg.pct_of_peak_sustained_elapsed", ""},
      {CounterRole::l2_hit_rate, "lts__t_sector_hit_rate.pct", ""},
      {CounterRole::duration_ns, "gpu__time_duration.sum", ""},
  };
  // clang-format on
  return table;
}

std::string_view counter_role_id(CounterRole role) {
  switch (role) {
    case CounterRole::achieved_occupancy:
      return "achieved_occupancy";
    case CounterRole::dram_read_bytes:
      return "dram_read_bytes";
    case CounterRole::dram_write_bytes:
      return "dram_write_bytes";
    case CounterRole::dram_throughput:
      return "dram_throughput";
    case CounterRole::tensor_active:
      return "tensor_active";
    case CounterRole::sm_throughput:
      return "sm_throughput";
    case CounterRole::l2_hit_rate:
      return "l2_hit_rate";
    case CounterRole::duration_ns:
      return "duration_ns";
  }
  return "unknown";
}

std::optional<double> counter_value(const std::map<std::string, double>& counters,
                                    CounterRole role) {
  for (const CounterMetric& m : counter_metric_table()) {
    if (m.role != role) continue;
    if (const auto it = counters.find(std::string(m.name)); it != counters.end()) return it->second;
  }
  return std::nullopt;
}

std::optional<double> dram_bytes_per_forward(const CaseProfile& p) {
  double bytes = 0;
  bool any = false;
  for (const KernelProfile& k : p.kernels) {
    const auto read = counter_value(k.counters, CounterRole::dram_read_bytes);
    const auto write = counter_value(k.counters, CounterRole::dram_write_bytes);
    if (!read || !write) return std::nullopt;  // a kernel without them: the sum would be short
    bytes += k.per_forward * (*read + *write);
    any = true;
  }
  return any ? std::optional<double>(bytes) : std::nullopt;
}

std::optional<ForwardBound> forward_bound(const CaseProfile& p) {
  double weight = 0, dram = 0, sm = 0;
  for (const KernelProfile& k : p.kernels) {
    const auto d = counter_value(k.counters, CounterRole::dram_throughput);
    const auto s = counter_value(k.counters, CounterRole::sm_throughput);
    if (!d || !s) continue;
    const double w = k.us_per_forward();
    weight += w;
    dram += w * *d;
    sm += w * *s;
  }
  if (weight <= 0) return std::nullopt;
  ForwardBound b{Bound::compute, dram / weight, sm / weight};
  if (b.dram_pct > b.sm_pct) b.bound = Bound::dram;
  return b;
}

const char* bound_name(Bound b) {
  return b == Bound::dram ? "DRAM-bound" : "compute-bound";
}

}  // namespace sdpa
