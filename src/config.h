// Sweep presets in JSON: parsing with errors that name file, line, column and what was expected.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "sweep.h"

namespace sdpa {

// Parses preset text; `source` names it in errors ("configs/default.json", "built-in default").
SweepConfig parse_config(std::string_view text, const std::string& source);
SweepConfig load_config_file(const std::string& path);
SweepConfig default_config();

nlohmann::json config_to_json(const SweepConfig& config);

}  // namespace sdpa
