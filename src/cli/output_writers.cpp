#include "cli/output_writers.h"

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "report/report.h"

namespace sdpa {
namespace {

// Every kept timing sample of every timed case, keyed like the cases (for --samples FILE).
nlohmann::json samples_to_json(const RunReport& report) {
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseResult& c : report.cases)
    if (c.timing)
      cases.push_back({{"backend", c.backend},
                       {"shape", c.problem.shape_label()},
                       {"dtype", dtype_name(c.problem.dtype)},
                       {"causal", c.problem.causal},
                       {"samples_ms", c.timing->samples_ms}});
  return nlohmann::json{{"schema", "sdpa-prof/samples"}, {"schema_version", 1}, {"cases", cases}};
}

// A file whose whole text `render` makes; `partial`, read at write time, marks a run cut short.
OutputWriter text_writer(std::string flag, const std::string& path, std::function<std::string()> render,
                         std::function<bool()> partial = [] { return false; }) {
  return {{std::move(flag), path}, [render = std::move(render), partial = std::move(partial)](
                                       const std::string& to, std::ostream& progress) {
            write_file_atomically(to, render());
            progress << "wrote " << to << (partial() ? " (partial)" : "") << "\n";
          }};
}

}  // namespace

std::vector<OutputWriter> report_writers(const CliOptions& o, const RunReport& report) {
  const auto partial = [&report] { return report.partial; };
  return {
      text_writer("--json", o.json_path, [&report] { return report_to_json(report).dump(2) + "\n"; }, partial),
      text_writer("--samples", o.samples_path, [&report] { return samples_to_json(report).dump(1) + "\n"; }, partial),
      text_writer("--csv", o.csv_path, [&o, &report] { return o.ops ? format_ops_csv(report) : format_csv(report); },
                  partial),
      text_writer("--md", o.md_path,
                  [&o, &report] { return format_markdown(report) + (o.ops ? format_ops_markdown(report) : ""); },
                  partial),
      text_writer("--html", o.html_path, [&report] { return format_html(report); }, partial),
  };
}

std::vector<OutputWriter> comparison_writers(const CliOptions& o, const Comparison& comparison,
                                             const RunReport& base, const RunReport& next) {
  return {
      text_writer("--md", o.md_path, [&comparison] { return format_comparison_markdown(comparison); }),
      text_writer("--json", o.json_path, [&comparison] { return comparison_to_json(comparison).dump(2) + "\n"; }),
      text_writer("--html", o.html_path,
                  [&comparison, &base, &next] { return format_comparison_html(comparison, base, next); }),
  };
}

void check_writers(const std::vector<OutputWriter>& writers, const std::vector<std::string>& inputs) {
  std::vector<OutputPath> outputs;
  for (const OutputWriter& w : writers) outputs.push_back(w.output);
  check_outputs(outputs, inputs);
}

void write_all(const std::vector<OutputWriter>& writers, std::ostream& progress) {
  for (const OutputWriter& w : writers)
    if (!w.output.path.empty()) w.write(w.output.path, progress);
}

}  // namespace sdpa
