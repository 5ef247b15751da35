#include "io/preset.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/json_input.h"
#include "model/errors.h"
#include "model/number_text.h"
#include "model/printable_text.h"

namespace sdpa {

extern const char* const kDefaultConfigJson;

namespace {

using nlohmann::json;

std::size_t line_of(std::string_view text, std::size_t offset, std::size_t& column) {
  std::size_t line = 1;
  column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return line;
}

// Where a key is written, for errors about its value (the parser keeps no positions).
std::string key_location(std::string_view text, const std::string& source, const std::string& key) {
  const std::size_t at = text.find("\"" + key + "\"");
  if (at == std::string_view::npos) return source;
  std::size_t column = 0;
  const std::size_t line = line_of(text, at, column);
  return fmt::format("{}:{}:{}", source, line, column);
}

[[noreturn]] void fail(const std::string& where, const std::string& key, const std::string& expected,
                       const json& got) {
  std::string text = got.dump();
  if (text.size() > 40) text = text.substr(0, 40) + "...";
  throw InputError(fmt::format("{}: \"{}\": expected {}, got {}", where, key, expected, text));
}

// A value or a non-empty list of values: every axis accepts both.
std::vector<json> items_of(const json& value, const std::string& where, const std::string& key) {
  if (!value.is_array()) return {value};
  if (value.empty()) fail(where, key, "a non-empty list", value);
  return {value.begin(), value.end()};
}

bool is_integer_in(const json& v, int64_t low, int64_t high) {
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= static_cast<uint64_t>(high) && low <= v.get<int64_t>();
  return v.is_number_integer() && v.get<int64_t>() >= low && v.get<int64_t>() <= high;
}

bool is_finite_number_at_least(const json& v, double low, bool strictly) {
  if (!v.is_number()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && (strictly ? d > low : d >= low);
}

std::string string_of(const json& v, const std::string& where, const std::string& key) {
  if (!v.is_string()) fail(where, key, "a string", v);
  return printable_text(v.get<std::string>());
}

}  // namespace

SweepConfig parse_config(std::string_view text, const std::string& source, const std::vector<AxisSpec>& axes,
                         UnknownKeys unknown) {
  const json doc = parse_untrusted_json(text, source, DuplicateKeys::refused);
  if (!doc.is_object()) throw InputError(fmt::format("{}: expected a JSON object at the top level", source));

  static const std::vector<std::string> settings{"name",        "description", "backends", "seed", "warmup",
                                                 "min_samples", "max_noise",   "min_time", "timeout", "hot",
                                                 "counters"};
  SweepConfig c;
  for (const auto& [key, value] : doc.items()) {
    const bool is_known = find_axis(axes, key) != nullptr || std::find(settings.begin(), settings.end(), key) != settings.end();
    if (!is_known && unknown == UnknownKeys::skipped) continue;
    const std::string where = key_location(text, source, key);
    if (const AxisSpec* axis = find_axis(axes, key)) {
      std::vector<AxisValue>& values = c.axes[key];
      for (const json& item : items_of(value, where, key))
        values.push_back(axis_value_from_json(*axis, item, where + ": "));
    } else if (key == "name") {
      c.name = string_of(value, where, key);
    } else if (key == "description") {
      string_of(value, where, key);
    } else if (key == "backends") {
      c.backends.clear();
      for (const json& item : items_of(value, where, key)) c.backends.push_back(string_of(item, where, key));
    } else if (key == "seed") {
      if (!value.is_number_unsigned()) fail(where, key, "an integer from 0 to 2^64-1", value);
      c.seed = value.get<uint64_t>();
    } else if (key == "warmup") {
      if (!is_integer_in(value, 0, 1000000)) fail(where, key, "an integer from 0 to 1000000", value);
      c.warmup = value.get<int>();
    } else if (key == "min_samples") {
      if (!is_integer_in(value, 1, 100000)) fail(where, key, "an integer from 1 to 100000", value);
      c.stopping.min_samples = value.get<int>();
    } else if (key == "max_noise") {
      if (!is_finite_number_at_least(value, 0, true)) fail(where, key, "a percentage > 0", value);
      c.stopping.max_noise = value.get<double>() / 100.0;
    } else if (key == "min_time" || key == "timeout") {
      if (!is_finite_number_at_least(value, 0, false)) fail(where, key, "seconds, >= 0", value);
      (key == "min_time" ? c.stopping.min_time_s : c.stopping.timeout_s) = value.get<double>();
    } else if (key == "hot") {
      if (!value.is_boolean()) fail(where, key, "true or false", value);
      c.hot = value.get<bool>();
    } else if (key == "counters") {
      if (!value.is_boolean()) fail(where, key, "true or false", value);
      c.counters = value.get<bool>();
    } else {
      std::string known;
      for (const AxisSpec& a : axes) known += (known.empty() ? "" : ", ") + a.name;
      for (const std::string& k : settings) known += ", " + k;
      throw InputError(fmt::format("{}: unknown key \"{}\" (known keys: {})", where, key.substr(0, 40), known));
    }
  }
  return c;
}

SweepConfig load_config_file(const std::string& path) {
  constexpr std::size_t kMaxPresetBytes = std::size_t{1} << 20;
  return parse_config(read_untrusted_text_file(path, kMaxPresetBytes), path);
}

SweepConfig default_config() { return parse_config(kDefaultConfigJson, "built-in default config"); }

nlohmann::json config_to_json(const SweepConfig& c, const std::vector<AxisSpec>& axes) {
  json j;
  j["name"] = c.name;
  j["backends"] = c.backends;
  for (const AxisSpec& a : axes) {
    const auto given = c.axes.find(a.name);
    if (given == c.axes.end() && a.defaults.empty()) continue;  // follows another axis, or unset
    json values = json::array();
    for (const AxisValue& v : c.values_of(a)) values.push_back(axis_value_to_json(v));
    j[a.name] = values;
  }
  if (c.seed) j["seed"] = *c.seed;
  j["warmup"] = c.warmup;
  j["hot"] = c.hot;
  j["counters"] = c.counters;
  j["min_samples"] = c.stopping.min_samples;
  j["max_noise"] = 100 * c.stopping.max_noise;
  j["min_time"] = c.stopping.min_time_s;
  j["timeout"] = c.stopping.timeout_s;
  return j;
}

}  // namespace sdpa
