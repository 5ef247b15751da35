// Printers over the one result model.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "model/comparison.h"
#include "model/result.h"
#include "report/text_layout.h"

namespace sdpa {

enum class ColumnChoice {
  compact,  // the default: the columns that tell the story, fitted to the width
  wide,     // every column, whatever the width
  listed,   // TableOptions::columns, in that order
};

struct TableOptions {
  TextStyle style;
  ColumnChoice choice = ColumnChoice::compact;
  std::vector<std::string> columns;  // ColumnChoice::listed: ids from table_column_ids()
  bool summary = true;               // the story under the table (--quiet drops it)
  bool every_finding = false;        // a library kernel's occupancy too (--kernels; --wide has it anyway)
};

// Aligned terminal table: one row per case, speed relative to the fastest backend per problem,
// what a forward launches; under it what the columns mean, the cases that did not run, the
// profile's findings and the summary, all wrapped at the style's width.
std::string format_table(const RunReport& report, const TableOptions& options = {});
// The ids --columns takes, in the order of the wide table.
std::vector<std::string> table_column_ids();

// Per problem: the fastest backend and by how much, and why each slower one is slower, from
// the results and their findings ("" when no case ran).
std::string format_summary(const RunReport& report, const TextStyle& style = {});

// Per case: each kernel (category, launches per forward, time, launch configuration, occupancy
// and what limits it, PyTorch's profiler-style estimate beside it) and each kind of memcpy.
std::string format_kernels(const RunReport& report, const TextStyle& style = {});

// Per case with CPU ops (a traced program's NVTX op ranges): the forward's op call tree, each op's
// calls, CPU total and self time and what it launched, per forward; fitted to the style's width.
// Markdown: a table per case (empty without ops); CSV: one row per case and op.
std::string format_ops(const RunReport& report, const TextStyle& style = {});
// What a report's per-call figures are per, in its legends: "forward" (or "backward", ...) when
// every case is of one pass, "call" when they mix.
const char* report_call_name(const RunReport& report);
std::string format_ops_markdown(const RunReport& report);
std::string format_ops_csv(const RunReport& report);

// The same rows as a Markdown table with every column (for pull requests and docs) and as CSV
// (for spreadsheets).
std::string format_markdown(const RunReport& report);
// What `trace` saw beyond its cases: each process, and its GPU work outside the case ranges.
std::string format_trace(const TraceInfo& trace);
std::string format_csv(const RunReport& report);

// One self-contained HTML page (no network, no external scripts or fonts): the environment, the
// sortable results table, the summary, charts as inline SVG, and per case its kernels,
// occupancy and findings.
std::string format_html(const RunReport& report);

// "; engine 2, knobs {...}; setup graph 0.4 ms, plan 1050 ms": what a backend chose, for text.
std::string setup_text(const BackendSetup& setup);

nlohmann::json report_to_json(const RunReport& report);
// Reads what report_to_json wrote; throws InputError naming what is missing or wrong.
RunReport report_from_json(const nlohmann::json& j);
// A result file, read as hostile input; errors name the file.
RunReport read_report_file(const std::string& path);

// Baseline against new, as an aligned table (regressions in colour when the style allows),
// Markdown (for a pull-request comment), JSON, and an HTML page with both runs' environments.
std::string format_comparison_table(const Comparison& c, const TextStyle& style = {});
std::string format_comparison_markdown(const Comparison& c);
nlohmann::json comparison_to_json(const Comparison& c);
// A verdict's colour: a regression bad, faster good, unclear or not comparable a warning.
Tone verdict_tone(const CaseComparison& k);
std::string format_comparison_html(const Comparison& c, const RunReport& base, const RunReport& next);

}  // namespace sdpa
