#include <fmt/format.h>

#include "model/axes.h"
#include "report/cell_escape.h"
#include "report/report.h"
#include "report/summary.h"
#include "report/table_columns.h"

namespace sdpa {
namespace {

std::string optional_number(bool present, double value, const char* format) {
  return present ? fmt::format(fmt::runtime(format), value) : "";
}

}  // namespace

std::string format_markdown(const RunReport& report) {
  std::string out;
  if (report.environment.device)
    out += fmt::format("{} · driver {} · CUDA {} · sdpa-prof {} ({})\n\n", markdown_cell(report.environment.device->name),
                       version_text(report.environment.device->driver_version),
                       version_text(report.environment.device->runtime_version),
                       markdown_cell(report.environment.tool_version), markdown_cell(report.environment.git_sha));
  const TableContext t(report);
  std::string header = "|";
  std::string rule = "|";
  for (const TableColumn& c : table_columns()) {
    header += fmt::format(" {} |", c.title);
    rule += c.right_aligned ? "---:|" : "---|";
  }
  out += header + "\n" + rule + "\n";
  for (const CaseResult& row : report.cases) {
    out += "|";
    for (const TableColumn& c : table_columns()) {
      const Tone tone = c.tone ? c.tone(row, t) : Tone::plain;
      const std::string cell = markdown_cell(c.cell(row, t));
      out += tone == Tone::best || tone == Tone::bad ? fmt::format(" **{}** |", cell) : fmt::format(" {} |", cell);
    }
    out += "\n";
  }
  const std::vector<ProblemSummary> summary = summarize(report);
  if (!summary.empty()) out += "\n**Summary**\n\n";
  for (const ProblemSummary& p : summary) {
    out += fmt::format("- {}\n", markdown_cell(p.problem));
    for (const SummaryLine& line : p.lines) out += fmt::format("  - {}\n", markdown_cell(line.text));
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
    for (const AxisSpec& a : axis_table())
      out.append(",").append(axis_present(a, c.problem) ? csv_field(axis_value_text(a.read(c.problem))) : "");
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
