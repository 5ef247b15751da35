#include <fmt/format.h>

#include "report/report.h"

namespace sdpa {
namespace {

std::string range_label(const RangeActivity& r) {
  return r.name.empty() ? "(outside any range)" : r.name;
}

}  // namespace

std::string format_trace(const TraceInfo& trace) {
  std::string text = fmt::format("traced: {} (exit {})\n", trace.command, trace.exit_code);
  if (trace.processes.empty())
    return text + "no process of the command initialized CUDA: nothing was recorded\n";
  for (const ProcessTrace& p : trace.processes) {
    text +=
        fmt::format("process {}: {} kernels, {} copies, {} memsets, {} case{}{}\n", p.pid,
                    p.kernels, p.memcpys, p.memsets, p.cases, p.cases == 1 ? "" : "s",
                    p.dropped > 0 ? fmt::format(", {} records dropped by CUPTI", p.dropped) : "");
    if (p.partial) text += fmt::format("  partial: {}\n", p.partial_reason);
    if (p.outside_cases.empty()) continue;
    std::size_t width = 20;
    for (const RangeActivity& r : p.outside_cases) width = std::max(width, range_label(r).size());
    width = std::min<std::size_t>(width, 72);
    text += fmt::format(
        "  outside the case ranges, by NVTX range:\n  {:<{}} {:>8} {:>7} {:>8} {:>11}\n", "range",
        width, "kernels", "copies", "memsets", "kernel ms");
    for (const RangeActivity& r : p.outside_cases) {
      std::string label = range_label(r);
      if (label.size() > width) label = label.substr(0, width - 3) + "...";
      text += fmt::format("  {:<{}} {:>8} {:>7} {:>8} {:>11.3f}\n", label, width, r.kernels,
                          r.memcpys, r.memsets, r.kernel_us / 1e3);
    }
  }
  return text;
}

}  // namespace sdpa
