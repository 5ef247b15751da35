// The result reader behind `report` and `compare` on any text, as the tool reads a file
// (cli/commands.cpp, load_report): parse_untrusted_json, then report_from_json; then every printer
// of `report` and `compare` on what was read. InputError (and the JSON errors the tool turns
// into one) is the answer to bad input; any other exception or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "compare/comparison.h"
#include "io/json_input.h"
#include "model/errors.h"
#include "report/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sdpa::RunReport report;
  try {
    nlohmann::json j;
    try {
      j = sdpa::parse_untrusted_json(text, "fuzz.json");
    } catch (const nlohmann::json::exception&) {  // load_report's "is not JSON"
      return 0;
    }
    report = sdpa::report_from_json(j);
  } catch (const sdpa::InputError&) {
    return 0;
  }
  sdpa::format_table(report);
  sdpa::format_kernels(report);
  sdpa::format_csv(report);
  sdpa::format_markdown(report);
  const sdpa::Comparison comparison = sdpa::compare_reports(report, report, 0.05);
  sdpa::format_comparison_table(comparison);
  sdpa::format_comparison_markdown(comparison);
  sdpa::comparison_to_json(comparison).dump(2);
  return 0;
}
