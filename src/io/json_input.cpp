#include "io/json_input.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "io/input_file.h"
#include "model/errors.h"
#include "model/number_text.h"
#include "model/printable_text.h"

namespace sdpa {
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

// What a value is, for "expected X, got Y": its type and a short echo, never the whole value.
std::string got_text(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return fmt::format("an object of {} keys", v.size());
    case json::value_t::array:
      return fmt::format("a list of {} items", v.size());
    default:
      return echo(v.dump());
  }
}

}  // namespace

json parse_untrusted_json(std::string_view text, const std::string& source, DuplicateKeys duplicates) {
  // The callback sees every value with its depth: deeper input is refused before it is built.
  bool too_deep = false;
  std::vector<std::set<std::string>> keys_of_open_objects;  // only when duplicates are refused
  std::string duplicate;
  const json::parser_callback_t check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxJsonDepth) too_deep = true;
    if (duplicates == DuplicateKeys::refused) {
      if (event == json::parse_event_t::object_start) keys_of_open_objects.emplace_back();
      if (event == json::parse_event_t::object_end && !keys_of_open_objects.empty()) keys_of_open_objects.pop_back();
      if (event == json::parse_event_t::key && !keys_of_open_objects.empty() &&
          !keys_of_open_objects.back().insert(parsed.get<std::string>()).second && duplicate.empty())
        duplicate = parsed.get<std::string>();
    }
    return !too_deep;
  };
  json doc;
  try {
    doc = json::parse(text.begin(), text.end(), check);
  } catch (const json::parse_error& e) {
    const Position pos = position_of(text, e.byte == 0 ? 0 : e.byte - 1);
    std::string what = e.what();
    if (const std::size_t at = what.find("syntax error"); at != std::string::npos) what = what.substr(at);
    throw InputError(fmt::format("{}:{}:{}: {}", source, pos.line, pos.column, what));
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: {}", source, e.what()));
  }
  if (too_deep) throw InputError(fmt::format("{}: nested deeper than {} levels", source, kMaxJsonDepth));
  if (!duplicate.empty())
    throw InputError(fmt::format("{}: the key {} is given twice; give it once", source, echo(duplicate)));
  return doc;
}

std::string read_untrusted_text_file(const std::string& path, std::size_t max_bytes) {
  const InputFile in = open_regular_file(path);
  std::string text;
  char buffer[1 << 16];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, in.get())) > 0;) {
    text.append(buffer, got);
    if (text.size() > max_bytes) throw InputError(fmt::format("{} is larger than {} bytes", path, max_bytes));
  }
  if (std::ferror(in.get())) throw InputError(fmt::format("cannot read {}", path));
  return text;
}

json read_untrusted_json_file(const std::string& path, std::size_t max_bytes) {
  return parse_untrusted_json(read_untrusted_text_file(path, max_bytes), path);
}

JsonFields::JsonFields(const json& object, std::string where) : object_(object), where_(std::move(where)) {
  if (!object_.is_object()) throw InputError(fmt::format("{}: expected an object, got {}", where_, got_text(object_)));
}

std::string JsonFields::path(std::string_view key) const {
  return where_.empty() ? std::string(key) : fmt::format("{}.{}", where_, key);
}

void JsonFields::fail(std::string_view key, const std::string& expected) const {
  const auto it = object_.find(key);
  throw InputError(fmt::format("{}: expected {}, got {}", path(key), expected,
                               it == object_.end() ? std::string("nothing") : got_text(*it)));
}

bool JsonFields::has(std::string_view key) const { return object_.contains(key); }

const json& JsonFields::raw(std::string_view key) const {
  const auto it = object_.find(key);
  if (it == object_.end()) throw InputError(fmt::format("{}: missing", path(key)));
  return *it;
}

JsonFields JsonFields::object(std::string_view key) const {
  const json& v = raw(key);
  if (!v.is_object()) fail(key, "an object");
  return JsonFields(v, path(key));
}

const json& JsonFields::array(std::string_view key) const {
  const json& v = raw(key);
  if (!v.is_array()) fail(key, "a list");
  return v;
}

int64_t JsonFields::integer(std::string_view key, int64_t low, int64_t high) const {
  const json& v = raw(key);
  const bool fits = v.is_number_integer() &&
                    (!v.is_number_unsigned() || v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX));
  if (!fits || v.get<int64_t>() < low || v.get<int64_t>() > high)
    fail(key, fmt::format("an integer from {} to {}", low, high));
  return v.get<int64_t>();
}

uint64_t JsonFields::unsigned_integer(std::string_view key) const {
  const json& v = raw(key);
  if (!v.is_number_unsigned()) fail(key, "an integer >= 0");
  return v.get<uint64_t>();
}

double JsonFields::number(std::string_view key, double low, double high) const {
  const json& v = raw(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < low || v.get<double>() > high)
    fail(key, high == std::numeric_limits<double>::max() ? fmt::format("a number >= {}", low)
                                                          : fmt::format("a number from {} to {}", low, high));
  return v.get<double>();
}

std::string JsonFields::text(std::string_view key) const {
  const json& v = raw(key);
  if (!v.is_string()) fail(key, "a string");
  return printable_text(v.get<std::string>());
}

bool JsonFields::boolean(std::string_view key) const {
  const json& v = raw(key);
  if (!v.is_boolean()) fail(key, "true or false");
  return v.get<bool>();
}

int64_t JsonFields::integer_or(std::string_view key, int64_t fallback, int64_t low, int64_t high) const {
  return has(key) ? integer(key, low, high) : fallback;
}

double JsonFields::number_or(std::string_view key, double fallback, double low, double high) const {
  return has(key) ? number(key, low, high) : fallback;
}

std::string JsonFields::text_or(std::string_view key, const std::string& fallback) const {
  return has(key) ? text(key) : fallback;
}

bool JsonFields::boolean_or(std::string_view key, bool fallback) const { return has(key) ? boolean(key) : fallback; }

std::string element_path(const std::string& array_path, std::size_t index) {
  return fmt::format("{}[{}]", array_path, index);
}

}  // namespace sdpa
