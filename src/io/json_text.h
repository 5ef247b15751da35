// JSON text that people and files give the tool: presets and saved results.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace sdpa {

// Deeper than any file of ours nests (a result: 7 levels). The parser does not recurse, but
// copying and printing what it built do: a preset of 100000 '[' ran the tool off its stack.
inline constexpr int kMaxJsonDepth = 100;

// json::parse (no comments) that refuses nesting deeper than kMaxJsonDepth with an InputError
// naming `source`; otherwise throws what json::parse throws: parse_error, and out_of_range for
// a number no double holds (1e400).
nlohmann::json parse_json_text(std::string_view text, const std::string& source);

}  // namespace sdpa
