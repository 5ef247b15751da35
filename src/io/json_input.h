// Reading JSON we did not write ourselves: every file is hostile until validated. Parsing bounds
// the nesting depth and the size; field reads check type, range and presence, and every failure
// is an InputError naming where ("cases[3].timing.median_ms: expected a number > 0, got -1").
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace sdpa {

inline constexpr int kMaxJsonDepth = 64;

// A key twice in one object: nlohmann keeps the last silently; a preset refuses it.
enum class DuplicateKeys { last_wins, refused };

// Parses `text`; errors name `source`, line and column. Deeper nesting than kMaxJsonDepth and
// numbers out of range are errors, never crashes.
nlohmann::json parse_untrusted_json(std::string_view text, const std::string& source,
                                    DuplicateKeys duplicates = DuplicateKeys::last_wins);
// The text of the file at `path`, at most `max_bytes`; a missing or unreadable file, or one that
// is not a regular file (a directory, a FIFO, a device), is an InputError.
std::string read_untrusted_text_file(const std::string& path, std::size_t max_bytes = std::size_t{1} << 30);
// Reads and parses the file at `path` (at most `max_bytes`); a missing file, a directory or an
// unreadable one is an InputError.
nlohmann::json read_untrusted_json_file(const std::string& path, std::size_t max_bytes = std::size_t{1} << 30);

// A JSON object being read, with the path that names it in errors.
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string where);

  bool has(std::string_view key) const;
  const nlohmann::json& raw(std::string_view key) const;  // required, any type
  JsonFields object(std::string_view key) const;
  const nlohmann::json& array(std::string_view key) const;
  int64_t integer(std::string_view key, int64_t low, int64_t high = std::numeric_limits<int64_t>::max()) const;
  uint64_t unsigned_integer(std::string_view key) const;
  double number(std::string_view key, double low, double high = std::numeric_limits<double>::max()) const;
  std::string text(std::string_view key) const;  // control characters escaped (printable_text)
  bool boolean(std::string_view key) const;

  // The same, or `fallback` when the key is absent (keys added by a later schema).
  int64_t integer_or(std::string_view key, int64_t fallback, int64_t low,
                     int64_t high = std::numeric_limits<int64_t>::max()) const;
  double number_or(std::string_view key, double fallback, double low,
                   double high = std::numeric_limits<double>::max()) const;
  std::string text_or(std::string_view key, const std::string& fallback) const;
  bool boolean_or(std::string_view key, bool fallback) const;

  const nlohmann::json& value() const { return object_; }
  const std::string& where() const { return where_; }
  std::string path(std::string_view key) const;  // "where.key"
  [[noreturn]] void fail(std::string_view key, const std::string& expected) const;

 private:
  const nlohmann::json& object_;
  std::string where_;
};

// "cases[3]": the path of an element of an array read through JsonFields.
std::string element_path(const std::string& array_path, std::size_t index);

}  // namespace sdpa
