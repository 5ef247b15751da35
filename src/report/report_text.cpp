#include <fmt/format.h>

#include "model/axes.h"
#include "report/report.h"

namespace sdpa {
namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

std::string optional_number(bool present, double value, const char* format) {
  return present ? fmt::format(fmt::runtime(format), value) : "";
}

}  // namespace

std::string format_markdown(const RunReport& report) {
  std::string out;
  if (report.environment.device)
    out += fmt::format("{} · driver {} · CUDA {} · sdpa-prof {} ({})\n\n", report.environment.device->name,
                       version_text(report.environment.device->driver_version),
                       version_text(report.environment.device->runtime_version),
                       report.environment.tool_version, report.environment.git_sha);
  out += "| backend | shape | dtype | causal | median ms | TFLOP/s | verified (rel L2) | status |\n";
  out += "|---|---|---|---|---:|---:|---|---|\n";
  for (const CaseResult& c : report.cases) {
    std::string status = status_name(c.status);
    if (!c.reason.empty()) status += ": " + c.reason;
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", c.backend, c.problem.shape_label(),
                       dtype_name(c.problem.dtype), c.problem.causal ? "yes" : "no",
                       c.timing ? fmt::format("{:.3f}", c.timing->median_ms) : "-",
                       c.timing ? fmt::format("{:.1f}", c.tflops()) : "-",
                       c.verification ? fmt::format("{} ({:.1e})", c.verification->passed ? "yes" : "**no**",
                                                    c.verification->rel_l2_error)
                                      : "-",
                       status);
  }
  return out;
}

std::string format_csv(const RunReport& report) {
  std::string out = "backend";
  for (const AxisSpec& a : axis_table()) out.append(",").append(a.result_key());
  out += ",status,median_ms,min_ms,max_ms,tflops,rel_l2_error,max_abs_error,reason\n";
  for (const CaseResult& c : report.cases) {
    const bool timed = c.timing.has_value();
    const bool verified = c.verification.has_value();
    out += csv_field(c.backend);
    for (const AxisSpec& a : axis_table()) out.append(",").append(csv_field(axis_value_text(a.read(c.problem))));
    out += fmt::format(",{},{},{},{},{},{},{},{}\n", status_name(c.status),
                       optional_number(timed, timed ? c.timing->median_ms : 0, "{:.6f}"),
                       optional_number(timed, timed ? c.timing->min_ms : 0, "{:.6f}"),
                       optional_number(timed, timed ? c.timing->max_ms : 0, "{:.6f}"),
                       optional_number(timed, c.tflops(), "{:.3f}"),
                       optional_number(verified, verified ? c.verification->rel_l2_error : 0, "{:.3e}"),
                       optional_number(verified, verified ? c.verification->max_abs_error : 0, "{:.3e}"),
                       csv_field(c.reason));
  }
  return out;
}

}  // namespace sdpa
