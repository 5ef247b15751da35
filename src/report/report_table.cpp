#include <algorithm>
#include <unordered_map>
#include <tuple>

#include <fmt/format.h>

#include "model/case_key.h"
#include "report/report.h"

namespace sdpa {
namespace {

constexpr std::size_t kKernelColumn = 32;

std::string verified_cell(const CaseResult& c) {
  if (!c.verification) return "-";
  return fmt::format("{} {:.1e}", c.verification->passed ? "yes" : "NO", c.verification->rel_l2_error);
}

std::string clipped(const std::string& text, std::size_t width) {
  return text.size() <= width ? text : text.substr(0, width - 3) + "...";
}

// "18.8% regs+smem": theoretical occupancy of the kernel and what limits it, abbreviated.
std::string occupancy_cell(const KernelProfile& k) {
  if (!k.occupancy) return "-";
  static constexpr std::pair<unsigned, const char*> kShort[] = {
      {kLimitRegisters, "regs"}, {kLimitSharedMemory, "smem"}, {kLimitWarps, "warps"},
      {kLimitBlocks, "blocks"},  {kLimitBarriers, "barriers"},
  };
  std::string limiters;
  for (const auto& [flag, name] : kShort)
    if ((k.occupancy->limiters & flag) != 0) {
      limiters += limiters.empty() ? "" : "+";
      limiters += name;
    }
  return fmt::format("{:.1f}% {}", 100 * k.occupancy->theoretical, limiters);
}

std::string profile_cells(const CaseResult& c) {
  const std::string host = c.host && c.host->calls > 0 ? fmt::format("{:.1f}", c.host->per_call_us) : "-";
  if (!c.profile) return fmt::format("{:>8} {:>7} {:>8}  {:<{}} {:<20}", "-", "-", host, "-", kKernelColumn, "-");
  const KernelProfile* top = c.profile->dominant_kernel();
  return fmt::format("{:>8} {:>7} {:>8}  {:<{}} {:<20}", fmt::format("{:g}", c.profile->kernels_per_forward()),
                     fmt::format("{:g}", c.profile->memcpys_per_forward()), host,
                     top ? clipped(top->name, kKernelColumn) : "-", kKernelColumn, top ? occupancy_cell(*top) : "-");
}

std::string findings_section(const RunReport& report) {
  std::string out;
  for (const CaseResult& c : report.cases) {
    std::vector<Finding> findings = c.timing ? clock_findings(*c.timing) : std::vector<Finding>{};
    if (c.profile) findings.insert(findings.end(), c.profile->findings.begin(), c.profile->findings.end());
    for (const Finding& f : findings)
      out += fmt::format("  {} {} {}: {}\n", c.backend, c.problem.shape_label(), dtype_name(c.problem.dtype), f.text);
  }
  return out.empty() ? out : fmt::format("\nfindings:\n{}", out);
}

// The median's relative spread; '*' when sampling stopped before reaching the noise target.
std::string spread_cell(const TimingStats& t) {
  if (t.relative_spread < 0) return "-";
  return fmt::format("{:.1f}%{}", 100 * t.relative_spread, t.converged ? "" : "*");
}

std::string peak_cell(const CaseResult& c, const std::optional<Ceilings>& ceilings) {
  if (!ceilings) return "-";
  const double peak = c.problem.dtype == DType::bf16 ? ceilings->bf16_gemm_tflops : ceilings->fp16_gemm_tflops;
  return fmt::format("{:.0f}%", 100 * c.tflops() / peak);
}

}  // namespace

std::string format_table(const RunReport& report) {
  std::unordered_map<CaseKey, double, CaseKeyHash> fastest_ms;
  for (const CaseResult& c : report.cases) {
    if (c.status != CaseStatus::ok || !c.timing) continue;  // a file may say ok without a timing
    double& best = fastest_ms.try_emplace(problem_key(c.problem), c.timing->median_ms).first->second;
    best = std::min(best, c.timing->median_ms);
  }

  // A time taken under 95% of the peak SM clock carries a letter saying why (see clock_marker).
  const bool any_marker = std::any_of(report.cases.begin(), report.cases.end(), [](const CaseResult& c) {
    return c.timing && clock_marker(*c.timing) != '\0';
  });
  std::string out = fmt::format(
      "{:<14} {:<26} {:<5} {:<6} {:>10} {:>7} {:>9} {:>6} {:>8} {:>8} {:>7} {:>8}  {:<{}} {:<20}  {:<13} {}\n", "backend",
      "shape", "dtype", "causal", "median ms", "+-", "TFLOP/s", "%peak", "vs best", "kern/fwd", "cpy/fwd", "host us",
      "dominant kernel", kKernelColumn, "occupancy", "verified", "status");
  for (const CaseResult& c : report.cases) {
    const Problem& p = c.problem;
    std::string timing_cells = fmt::format("{:>10} {:>7} {:>9} {:>6} {:>8}", "-", "-", "-", "-", "-");
    if (c.timing) {
      // A file may give a timing to a case that is not ok: no ok case of its problem to compare with.
      const auto best = fastest_ms.find(problem_key(p));
      const std::string vs_best =
          best == fastest_ms.end() ? "-" : fmt::format("{:.2f}x", c.timing->median_ms / best->second);
      const char marker = clock_marker(*c.timing);
      const std::string median = fmt::format("{:.3f}{}", c.timing->median_ms,
                                             marker != '\0' ? std::string(1, marker) : any_marker ? " " : "");
      timing_cells = fmt::format("{:>10} {:>7} {:>9.1f} {:>6} {:>8}", median, spread_cell(*c.timing),
                                 c.tflops(), peak_cell(c, report.environment.ceilings), vs_best);
    }
    std::string status = status_name(c.status);
    if (!c.reason.empty()) status += ": " + c.reason;
    out += fmt::format("{:<14} {:<26} {:<5} {:<6} {} {}  {:<13} {}\n", c.backend, p.shape_label(),
                       dtype_name(p.dtype), p.causal ? "yes" : "no", timing_cells, profile_cells(c),
                       verified_cell(c), status);
  }
  out += findings_section(report);
  if (report.environment.ceilings)
    out += fmt::format("\n%peak: of this GPU's measured {} TFLOP/s bf16 GEMM ceiling ({:.1f} fp16); "
                       "+-: the median's 95% interval, * not converged\n",
                       fmt::format("{:.1f}", report.environment.ceilings->bf16_gemm_tflops),
                       report.environment.ceilings->fp16_gemm_tflops);
  if (any_marker)
    out += fmt::format("{}p, t, h, c after a time: it ran under 95% of the peak SM clock (power cap, thermal, "
                       "hardware slowdown, other or unknown reason); see findings\n",
                       report.environment.ceilings ? "" : "\n");
  const Profiler& profiler = report.environment.profiler;
  if (!profiler.enabled && !profiler.description.empty())
    out += fmt::format("\nprofile off, timing only: {}\n", profiler.description);
  return out;
}

}  // namespace sdpa
