// The result reader behind `report` and `compare` on any text, as the tool reads a file
// (cli/commands.cpp, load_report): parse_untrusted_json, then report_from_json; then every printer
// of `report` and `compare` on what was read, whose output must hold no control character but
// its newlines. InputError (and the JSON errors the tool turns
// into one) is the answer to bad input; any other exception or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "compare/comparison.h"
#include "io/json_input.h"
#include "model/errors.h"
#include "report/report.h"

namespace {

bool has_control_character(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7F) return true;
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F) return true;
  }
  return false;
}

}  // namespace

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
  const sdpa::Comparison comparison = sdpa::compare_reports(report, report, 0.05);
  // What reaches a terminal, a pull-request comment or a spreadsheet: no control character of
  // the file's strings survives (issue 28), only the printers' own newlines.
  for (const std::string& printed :
       {sdpa::format_table(report), sdpa::format_kernels(report), sdpa::format_csv(report), sdpa::format_markdown(report),
        sdpa::format_comparison_table(comparison), sdpa::format_comparison_markdown(comparison)})
    if (has_control_character(printed)) std::abort();
  sdpa::comparison_to_json(comparison).dump(2);
  return 0;
}
