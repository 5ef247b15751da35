#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "report/report.h"
#include "report/table_columns.h"
#include "report/text_layout.h"

namespace sdpa {
namespace {

constexpr std::size_t kNameColumn = 56;

std::string dims(const Dim3& d) { return fmt::format("({},{},{})", d.x, d.y, d.z); }

std::string case_summary(const CaseResult& c, const CaseProfile& p) {
  const double kernel_us = p.kernel_us_per_forward();
  const double wall_us = p.wall_us_per_forward();
  std::string text = fmt::format(
      "{} {} {}{}: {:g} kernels, {:g} memcpys, {:g} memsets per {} (mean of {}); kernel time "
      "{:.1f} us of "
      "{:.1f} us wall ({:.0f}%)",
      c.backend, c.problem.shape_label(), dtype_name(c.problem.dtype),
      c.problem.causal ? " causal" : "", p.kernels_per_forward(), p.memcpys_per_forward(),
      p.memsets_per_forward(), pass_call_name(c.problem.pass), p.forwards.size(), kernel_us,
      wall_us, wall_us > 0 ? 100 * kernel_us / wall_us : 0.0);
  if (c.host)
    text += fmt::format("; host {:.1f} us per call, first call {:.1f} us, setup {:.2f} ms", c.host->per_call_us,
                        c.host->first_call_us, c.host->setup_ms);
  if (p.dropped_records > 0) text += fmt::format("; {} records dropped", p.dropped_records);
  text += setup_text(c.setup);
  return text;
}

std::string kernel_row(const KernelProfile& k) {
  const OccupancyEstimate* o = k.occupancy ? &*k.occupancy : nullptr;
  return fmt::format("  {} {:<16} {:>5g} {:>9.1f}  {:<16} {:<12} {:>4} {:>12}  {:<7} {:<8} {:>6} {:<26} {:>6}\n",
                     pad(shorten_middle(kernel_display_name(k), kNameColumn), kNameColumn), category_name(k.category),
                     k.per_forward, k.mean_us, dims(k.grid), dims(k.block), k.registers_per_thread,
                     fmt::format("{:.1f}+{:.1f}", k.static_shared / 1024.0, k.dynamic_shared / 1024.0),
                     fmt::format("{}x{}x{}", k.cluster.x, k.cluster.y, k.cluster.z), k.launch_type,
                     o ? fmt::format("{:.1f}%", 100 * o->theoretical) : "-", o ? limiter_text(o->limiters) : "-",
                     o ? fmt::format("{:.1f}%", 100 * o->profiler_style) : "-");
}

std::string percent_cell(const KernelProfile& k, CounterRole role) {
  const std::optional<double> v = counter_value(k.counters, role);
  return v ? fmt::format("{:.1f}%", *v) : "-";
}

std::string megabytes_cell(const KernelProfile& k, CounterRole role) {
  const std::optional<double> v = counter_value(k.counters, role);
  return v ? fmt::format("{:.1f}", *v / 1e6) : "-";
}

// The kernels' hardware counters, one row per kernel, under the launch table.
std::string counter_rows(const CaseProfile& p, AttentionPass pass, const TextStyle& style) {
  if (!p.counters) return p.counters_skipped.empty() ? "" : wrap("  counters: none: " + p.counters_skipped, style.width, 2, 4);
  const CounterSource& s = *p.counters;
  std::string text = fmt::format("  counters: {}, {}, {} passes, {:.1f} ms", s.api, s.chip, s.passes, s.wall_ms);
  if (const std::optional<double> bytes = dram_bytes_per_forward(p))
    text += fmt::format("; DRAM {:.3f} GB per {}", *bytes / 1e9, pass_call_name(pass));
  if (const std::optional<ForwardBound> b = forward_bound(p))
    text += fmt::format("; {} (DRAM {:.0f}%, SM {:.0f}% over the kernel time)", bound_name(b->bound), b->dram_pct, b->sm_pct);
  if (!s.unavailable.empty()) text += fmt::format("; not on this GPU: {}", fmt::join(s.unavailable, ", "));
  std::string out = wrap(text, style.width, 2, 4);
  out += fmt::format("  {:<56} {:>8} {:>8} {:>10} {:>10} {:>6} {:>8} {:>6} {:>7}\n", "kernel", "ach.occ.", "occ.",
                     "DRAM rd MB", "DRAM wr MB", "DRAM%", "tensor%", "SM%", "L2 hit");
  for (const KernelProfile& k : p.kernels)
    out += fmt::format("  {} {:>8} {:>8} {:>10} {:>10} {:>6} {:>8} {:>6} {:>7}\n",
                       pad(shorten_middle(kernel_display_name(k), kNameColumn), kNameColumn),
                       percent_cell(k, CounterRole::achieved_occupancy),
                       k.occupancy ? fmt::format("{:.1f}%", 100 * k.occupancy->theoretical) : "-",
                       megabytes_cell(k, CounterRole::dram_read_bytes), megabytes_cell(k, CounterRole::dram_write_bytes),
                       percent_cell(k, CounterRole::dram_throughput), percent_cell(k, CounterRole::tensor_active),
                       percent_cell(k, CounterRole::sm_throughput), percent_cell(k, CounterRole::l2_hit_rate));
  return out;
}

}  // namespace

std::string setup_text(const BackendSetup& setup) {
  std::string text;
  if (!setup.config.empty()) text += "; chose " + setup.config;
  for (std::size_t i = 0; i < setup.times_ms.size(); ++i)
    text += fmt::format("{}{} {:.2f} ms", i == 0 ? "; setup " : ", ", setup.times_ms[i].first, setup.times_ms[i].second);
  return text;
}

std::string format_kernels(const RunReport& report, const TextStyle& style) {
  std::string out;
  for (const CaseResult& c : report.cases) {
    const std::string clocks = c.timing ? clock_text(*c.timing) : "";
    if (!c.profile && clocks.empty()) continue;
    out += '\n';
    out += c.profile ? wrap(case_summary(c, *c.profile), style.width, 0, 4)
                     : fmt::format("{} {} {}{}:\n", c.backend, c.problem.shape_label(), dtype_name(c.problem.dtype),
                                   c.problem.causal ? " causal" : "");
    if (!clocks.empty()) out += wrap("  clocks: " + clocks, style.width, 2, 4);
    if (!c.profile) continue;
    const CaseProfile& p = *c.profile;
    out += fmt::format(
        "  {:<56} {:<16} {:>5} {:>9}  {:<16} {:<12} {:>4} {:>12}  {:<7} {:<8} {:>6} {:<26} {:>6}\n",
        "kernel", "category", "/call", "mean us", "grid", "block", "regs", "smem KB s+d", "cluster",
        "launch", "occ.", "limited by", "torch");
    for (const KernelProfile& k : p.kernels) out += kernel_row(k);
    for (const MemcpyProfile& m : p.memcpys)
      out += fmt::format("  {:<56} {:<16} {:>5g} {:>9.1f}  {:.1f} MiB per copy\n", fmt::format("memcpy {}", m.kind), "copy",
                         m.per_forward, m.mean_us, m.mib_per_copy());
    out += counter_rows(p, c.problem.pass, style);
  }
  if (out.empty()) return out;
  const bool any_counters = std::any_of(report.cases.begin(), report.cases.end(),
                                        [](const CaseResult& c) { return c.profile && c.profile->counters; });
  return out + "\n" +
         wrap("occ.: theoretical occupancy (opt-in shared-memory limit, the carveout the kernel ran with); torch: "
              "what PyTorch's profiler estimates (48 KB default limit, blocks capped by grid / SMs)" +
                  std::string(any_counters ? "; counters (one launch, measured): ach.occ. achieved occupancy, DRAM "
                                             "read/write per launch, DRAM% and SM% of peak throughput, tensor% of "
                                             "cycles with the tensor pipes busy, L2 sector hit rate"
                                           : ""),
              style.width, 0, 2);
}

}  // namespace sdpa
