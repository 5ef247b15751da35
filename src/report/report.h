// Printers over the one result model.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "model/comparison.h"
#include "model/result.h"

namespace sdpa {

// Aligned terminal table: one row per case, speed relative to the fastest backend per problem,
// what a forward launches and costs on the host; then the profile's findings.
std::string format_table(const RunReport& report);

// Per case: each kernel (category, launches per forward, time, launch configuration, occupancy
// and what limits it, PyTorch's profiler-style estimate beside it) and each kind of memcpy.
std::string format_kernels(const RunReport& report);

// The same rows as a Markdown table (for pull requests and docs) and as CSV (for spreadsheets).
std::string format_markdown(const RunReport& report);
std::string format_csv(const RunReport& report);

// "; engine 2, knobs {...}; setup graph 0.4 ms, plan 1050 ms": what a backend chose, for text.
std::string setup_text(const BackendSetup& setup);

nlohmann::json report_to_json(const RunReport& report);
// Reads what report_to_json wrote; throws InputError naming what is missing or wrong.
RunReport report_from_json(const nlohmann::json& j);

// Baseline against new, as an aligned table, Markdown (for a pull-request comment) and JSON.
std::string format_comparison_table(const Comparison& c);
std::string format_comparison_markdown(const Comparison& c);
nlohmann::json comparison_to_json(const Comparison& c);

}  // namespace sdpa
