#include "config.h"

#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sdpa {

extern const char* const kDefaultConfigJson;

namespace {

using nlohmann::json;

struct Position {
  std::size_t line = 1;
  std::size_t column = 1;
};

Position position_of(std::string_view text, std::size_t offset) {
  Position pos;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

// Where a key is written, for errors about its value (the parser keeps no positions).
std::string key_location(std::string_view text, const std::string& source, const std::string& key) {
  const std::size_t at = text.find("\"" + key + "\"");
  if (at == std::string_view::npos) return source;
  const Position pos = position_of(text, at);
  return fmt::format("{}:{}:{}", source, pos.line, pos.column);
}

class ConfigReader {
 public:
  ConfigReader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  [[noreturn]] void fail(const std::string& key, const std::string& expected, const json& got) const {
    throw InputError(fmt::format("{}: \"{}\": expected {}, got {}", key_location(text_, source_, key),
                                 key, expected, got.dump()));
  }

  // A value or a list of values: every axis accepts both.
  template <typename Convert>
  auto list(const json& value, const std::string& key, const std::string& expected,
            Convert convert) const {
    using T = decltype(convert(value));
    std::vector<T> out;
    const auto take = [&](const json& item) {
      std::optional<T> v = convert_or_empty(item, convert);
      if (!v) fail(key, expected, value);
      out.push_back(*v);
    };
    if (value.is_array()) {
      if (value.empty()) fail(key, "a non-empty list", value);
      for (const json& item : value) take(item);
    } else {
      take(value);
    }
    return out;
  }

 private:
  template <typename Convert>
  static auto convert_or_empty(const json& item, Convert convert) -> std::optional<decltype(convert(item))> {
    try {
      return convert(item);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

  std::string_view text_;
  const std::string& source_;
};

int64_t positive_integer(const json& v) {
  if (!v.is_number_integer() || v.get<int64_t>() <= 0) throw std::invalid_argument("not positive");
  return v.get<int64_t>();
}

DType dtype_value(const json& v) {
  DType t{};
  if (!v.is_string() || !parse_dtype(v.get<std::string>(), t)) throw std::invalid_argument("dtype");
  return t;
}

bool bool_value(const json& v) {
  if (!v.is_boolean()) throw std::invalid_argument("bool");
  return v.get<bool>();
}

std::string string_value(const json& v) {
  if (!v.is_string()) throw std::invalid_argument("string");
  return v.get<std::string>();
}

}  // namespace

SweepConfig parse_config(std::string_view text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    const Position pos = position_of(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    if (const std::size_t at = what.find("syntax error"); at != std::string::npos) what = what.substr(at);
    throw InputError(fmt::format("{}:{}:{}: {}", source, pos.line, pos.column, what));
  }
  if (!doc.is_object()) throw InputError(fmt::format("{}: expected a JSON object at the top level", source));

  const ConfigReader reader(text, source);
  SweepConfig c;
  static const std::set<std::string> known{"name",    "description", "backends", "batch",
                                           "heads",   "kv_heads",    "head_dim", "seq",
                                           "seq_kv",  "dtype",       "causal",   "scale",
                                           "seed",    "warmup",      "min_samples",
                                           "max_noise", "min_time",  "timeout",  "hot"};
  for (const auto& [key, value] : doc.items()) {
    if (!known.contains(key))
      throw InputError(fmt::format("{}: unknown key \"{}\" (known keys: name, description, backends, "
                                   "batch, heads, kv_heads, head_dim, seq, seq_kv, dtype, causal, "
                                   "scale, seed, warmup, min_samples, max_noise, min_time, timeout, hot)",
                                   key_location(text, source, key), key));
    const char* ints = "a positive integer or a list of them";
    if (key == "name") {
      c.name = reader.list(value, key, "a string", string_value).front();
    } else if (key == "description") {
      reader.list(value, key, "a string", string_value);
    } else if (key == "backends") {
      c.backends = reader.list(value, key, "a backend name or a list of them", string_value);
    } else if (key == "batch") {
      c.batch = reader.list(value, key, ints, positive_integer);
    } else if (key == "heads") {
      c.heads = reader.list(value, key, ints, positive_integer);
    } else if (key == "kv_heads") {
      c.kv_heads = reader.list(value, key, ints, positive_integer);
    } else if (key == "head_dim") {
      c.head_dim = reader.list(value, key, ints, positive_integer);
    } else if (key == "seq") {
      c.seq = reader.list(value, key, ints, positive_integer);
    } else if (key == "seq_kv") {
      c.seq_kv = reader.list(value, key, ints, positive_integer);
    } else if (key == "dtype") {
      c.dtypes = reader.list(value, key, "\"bf16\", \"fp16\" or a list of them", dtype_value);
    } else if (key == "causal") {
      c.causal = reader.list(value, key, "true, false or a list of them", bool_value);
    } else if (key == "scale") {
      if (!value.is_number() || value.get<double>() <= 0) reader.fail(key, "a positive number", value);
      c.scale = value.get<double>();
    } else if (key == "seed") {
      if (!value.is_number_unsigned()) reader.fail(key, "a non-negative integer", value);
      c.seed = value.get<uint64_t>();
    } else if (key == "warmup") {
      if (!value.is_number_unsigned()) reader.fail(key, "a non-negative integer", value);
      c.warmup = value.get<int>();
    } else if (key == "min_samples") {
      c.stopping.min_samples = static_cast<int>(reader.list(value, key, "a positive integer", positive_integer).front());
    } else if (key == "max_noise") {
      if (!value.is_number() || value.get<double>() <= 0) reader.fail(key, "a positive percentage", value);
      c.stopping.max_noise = value.get<double>() / 100.0;
    } else if (key == "min_time" || key == "timeout") {
      if (!value.is_number() || value.get<double>() < 0) reader.fail(key, "seconds, >= 0", value);
      (key == "min_time" ? c.stopping.min_time_s : c.stopping.timeout_s) = value.get<double>();
    } else if (key == "hot") {
      c.hot = reader.list(value, key, "true or false", bool_value).front();
    }
  }
  return c;
}

SweepConfig load_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("cannot read config file {}", path));
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path);
}

SweepConfig default_config() { return parse_config(kDefaultConfigJson, "built-in default config"); }

nlohmann::json config_to_json(const SweepConfig& c) {
  json j;
  j["name"] = c.name;
  j["backends"] = c.backends;
  j["batch"] = c.batch;
  j["heads"] = c.heads;
  if (!c.kv_heads.empty()) j["kv_heads"] = c.kv_heads;
  j["head_dim"] = c.head_dim;
  j["seq"] = c.seq;
  if (!c.seq_kv.empty()) j["seq_kv"] = c.seq_kv;
  std::vector<std::string> dtypes;
  for (const DType t : c.dtypes) dtypes.emplace_back(dtype_name(t));
  j["dtype"] = dtypes;
  j["causal"] = c.causal;
  if (c.scale > 0) j["scale"] = c.scale;
  if (c.seed) j["seed"] = *c.seed;
  j["warmup"] = c.warmup;
  j["hot"] = c.hot;
  j["min_samples"] = c.stopping.min_samples;
  j["max_noise"] = 100 * c.stopping.max_noise;
  j["min_time"] = c.stopping.min_time_s;
  j["timeout"] = c.stopping.timeout_s;
  return j;
}

}  // namespace sdpa
