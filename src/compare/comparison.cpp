#include "compare/comparison.h"

#include "model/case_key.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

namespace sdpa {
namespace {

void note_difference(std::vector<std::string>& out, const char* what, const std::string& a,
                     const std::string& b) {
  if (a != b) out.push_back(fmt::format("{}: {} -> {}", what, a, b));
}

std::vector<std::string> environment_differences(const Environment& a, const Environment& b) {
  std::vector<std::string> out;
  if (!a.device || !b.device) return out;
  const DeviceInfo& x = *a.device;
  const DeviceInfo& y = *b.device;
  note_difference(out, "device", x.name, y.name);
  note_difference(out, "driver", version_text(x.driver_version), version_text(y.driver_version));
  note_difference(out, "CUDA runtime", version_text(x.runtime_version), version_text(y.runtime_version));
  note_difference(out, "cuBLAS", std::to_string(x.cublas_version), std::to_string(y.cublas_version));
  note_difference(out, "cuDNN", std::to_string(x.cudnn_version), std::to_string(y.cudnn_version));
  return out;
}

// Structure that changed for the worse, whatever the time says: a fused backend that now
// launches more than one kernel, more kernels than before, a memcpy that was not there.
std::string structural_regression(const CaseResult& base, const CaseResult& next) {
  if (!base.profile || !next.profile) return {};
  const double base_kernels = base.profile->kernels_per_forward();
  const double new_kernels = next.profile->kernels_per_forward();
  const double base_copies = base.profile->memcpys_per_forward();
  const double new_copies = next.profile->memcpys_per_forward();
  const char* call = pass_call_name(next.problem.pass);
  if (new_copies > base_copies)
    return fmt::format("memcpys per {} {:g} -> {:g}", call, base_copies, new_copies);
  if (new_kernels > base_kernels)
    return fmt::format("kernels per {} {:g} -> {:g}{}", call, base_kernels, new_kernels,
                       base_kernels == 1 ? " (no longer one fused kernel)" : "");
  return {};
}

// Clocks that differ by less than this are not mentioned.
constexpr double kClockNoteFraction = 0.01;

// The SM clocks of both runs, when both carry one, and the change at equal clocks.
void compare_clocks(const TimingStats& base, const TimingStats& next, CaseComparison& c) {
  if (base.sm_clock_mhz <= 0 || next.sm_clock_mhz <= 0) return;
  c.clock_change = next.sm_clock_mhz / base.sm_clock_mhz - 1.0;
  c.change_at_equal_clock = (1.0 + c.change) * (1.0 + *c.clock_change) - 1.0;
}

std::string clock_note(const TimingStats& base, const TimingStats& next, const CaseComparison& c) {
  if (!c.clock_change || std::abs(*c.clock_change) < kClockNoteFraction) return {};
  return fmt::format("SM clock {:.0f} -> {:.0f} MHz ({:+.0f}%), at equal clocks {:+.1f}% (estimate)",
                     base.sm_clock_mhz, next.sm_clock_mhz, 100 * *c.clock_change, 100 * *c.change_at_equal_clock);
}

// A slowdown that a lower clock explains: at equal clocks the change would not count.
bool explained_by_clock(const CaseComparison& c, double threshold) {
  return c.clock_change && *c.clock_change < 0 &&
         (*c.change_at_equal_clock < threshold || *c.change_at_equal_clock <= c.noise);
}

// A forward whose kernels now move more DRAM bytes than before, by more than `threshold`.
void compare_dram_bytes(const CaseResult& base, const CaseResult& next, double threshold, CaseComparison& c) {
  if (!base.profile || !next.profile) return;
  const std::optional<double> before = dram_bytes_per_forward(*base.profile);
  const std::optional<double> after = dram_bytes_per_forward(*next.profile);
  if (!before || !after || *before <= 0) return;
  c.dram_bytes_change = *after / *before - 1.0;
  if (*c.dram_bytes_change <= threshold) return;
  c.note += fmt::format(
      "{}DRAM bytes per {} {:.3f} -> {:.3f} GB ({:+.1f}%): its kernels now move more data",
      c.note.empty() ? "" : "; ", pass_call_name(next.problem.pass), *before / 1e9, *after / 1e9,
      100 * *c.dram_bytes_change);
  if (!c.regression) c.kind = RegressionKind::dram_bytes;
  c.regression = true;
}

// Times that cannot be compared: every sample of a run ran under the throttle threshold.
std::string untrusted_timing(const CaseResult& base, const CaseResult& next) {
  const auto throttled = [](const char* run, const TimingStats& t) {
    return fmt::format("every sample of the {} run ran throttled (SM clock {:.0f} of {:.0f} MHz): its time is not to be "
                       "trusted",
                       run, t.sm_clock_mhz, t.sm_clock_peak_mhz);
  };
  if (base.timing->all_throttled) return throttled("base", *base.timing);
  if (next.timing->all_throttled) return throttled("new", *next.timing);
  return {};
}

CaseComparison compare_case(const CaseResult& base, const CaseResult& next, double threshold, bool strict_clock) {
  CaseComparison c;
  c.backend = next.backend;
  c.problem = next.problem;
  if (base.timing) c.base_ms = base.timing->median_ms;
  if (next.timing) c.new_ms = next.timing->median_ms;

  if (base.status == CaseStatus::ok && next.status != CaseStatus::ok) {
    c.regression = true;
    c.kind = RegressionKind::status;
    c.note = fmt::format("was ok, now {}: {}", status_name(next.status), next.reason);
    return c;
  }
  if (!base.timing || !next.timing) {
    c.note = fmt::format("base {}, new {}", status_name(base.status), status_name(next.status));
    return c;
  }
  c.change = next.timing->median_ms / base.timing->median_ms - 1.0;
  c.noise = relative_noise(*base.timing) + relative_noise(*next.timing);
  compare_clocks(*base.timing, *next.timing, c);
  if (std::string structure = structural_regression(base, next); !structure.empty()) {
    c.verdict = c.change > 0 ? Verdict::slower : (c.change < 0 ? Verdict::faster : Verdict::same);
    c.regression = true;
    c.kind = RegressionKind::structure;
    c.note = structure;
    compare_dram_bytes(base, next, threshold, c);
    return c;
  }
  if (const std::string why = untrusted_timing(base, next); !why.empty()) {
    c.verdict = Verdict::not_comparable;
    c.note = why;
    c.regression = strict_clock;
    if (c.regression) c.kind = RegressionKind::time;
    return c;
  }
  if (std::abs(c.change) < threshold) {
    c.verdict = Verdict::same;
  } else if (std::abs(c.change) <= c.noise) {
    c.verdict = Verdict::unclear;
    c.note = fmt::format("the change is inside the runs' noise ({:.1f}%)", 100 * c.noise);
  } else {
    c.verdict = c.change > 0 ? Verdict::slower : Verdict::faster;
    if (c.verdict == Verdict::slower && explained_by_clock(c, threshold)) c.verdict = Verdict::slower_clock;
    c.regression = c.verdict == Verdict::slower || (c.verdict == Verdict::slower_clock && strict_clock);
    if (c.regression) c.kind = RegressionKind::time;
  }
  compare_dram_bytes(base, next, threshold, c);
  if (const std::string clocks = clock_note(*base.timing, *next.timing, c); !clocks.empty())
    c.note += (c.note.empty() ? "" : "; ") + clocks;
  return c;
}

}  // namespace

double relative_noise(const TimingStats& t) {
  if (t.relative_spread >= 0) return t.relative_spread;
  return t.median_ms > 0 ? (t.max_ms - t.min_ms) / (2.0 * t.median_ms) : 0.0;  // before schema 3
}

Comparison compare_reports(const RunReport& base, const RunReport& next, double threshold, bool strict_clock) {
  Comparison out;
  out.threshold = threshold;
  out.strict_clock = strict_clock;
  out.environment_differences = environment_differences(base.environment, next.environment);
  std::unordered_map<CaseKey, const CaseResult*, CaseKeyHash> base_cases;
  for (const CaseResult& c : base.cases) base_cases[case_key(c.backend, c.problem)] = &c;
  for (const CaseResult& c : next.cases) {
    const auto it = base_cases.find(case_key(c.backend, c.problem));
    if (it == base_cases.end()) {
      CaseComparison only;
      only.backend = c.backend;
      only.problem = c.problem;
      if (c.timing) only.new_ms = c.timing->median_ms;
      only.verdict = Verdict::only_in_new;
      out.cases.push_back(only);
      continue;
    }
    out.cases.push_back(compare_case(*it->second, c, threshold, strict_clock));
    base_cases.erase(it);
  }
  for (const CaseResult& c : base.cases) {
    if (!base_cases.contains(case_key(c.backend, c.problem))) continue;
    CaseComparison only;
    only.backend = c.backend;
    only.problem = c.problem;
    if (c.timing) only.base_ms = c.timing->median_ms;
    only.verdict = Verdict::only_in_base;
    out.cases.push_back(only);
  }
  return out;
}

}  // namespace sdpa
