// Sweep presets in JSON (configs/*.json, and the "config" of a result file): axis keys come from
// the axis table; errors name file, line, column and what was expected.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/sweep.h"

namespace sdpa {

// A key the parser does not know: a preset's is an error; the config inside a result file,
// perhaps written by a later version, skips it (the README's rule for readers).
enum class UnknownKeys { refused, skipped };

// Parses preset text; `source` names it in errors ("configs/default.json", "built-in default").
// A key given twice is an error.
SweepConfig parse_config(std::string_view text, const std::string& source,
                         const std::vector<AxisSpec>& axes = axis_table(),
                         UnknownKeys unknown = UnknownKeys::refused);
SweepConfig load_config_file(const std::string& path);
SweepConfig default_config();

nlohmann::json config_to_json(const SweepConfig& config, const std::vector<AxisSpec>& axes = axis_table());

}  // namespace sdpa
