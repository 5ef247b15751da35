#include "model/number_text.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "model/errors.h"

namespace sdpa {

std::optional<int64_t> decimal_integer(std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> decimal_unsigned(std::string_view text) {
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<double> finite_number(std::string_view text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

int64_t integer_in(std::string_view what, std::string_view text, int64_t low, int64_t high) {
  const std::optional<int64_t> v = decimal_integer(text);
  if (!v || *v < low || *v > high)
    throw InputError(fmt::format("{}: expected an integer from {} to {}, got {}", what, low, high, echo(text)));
  return *v;
}

double number_above(std::string_view what, std::string_view text, double low, bool inclusive) {
  const std::optional<double> v = finite_number(text);
  if (!v || *v < low || (!inclusive && *v == low))
    throw InputError(fmt::format("{}: expected a number {} {}, got {}", what, inclusive ? ">=" : ">", low, echo(text)));
  return *v;
}

std::string echo(std::string_view text) {
  constexpr std::size_t kMaxEcho = 40;
  if (text.size() > kMaxEcho) return fmt::format("'{}...' ({} characters)", text.substr(0, kMaxEcho), text.size());
  return fmt::format("'{}'", text);
}

std::string command_line_text(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    if (!line.empty()) line += ' ';
    line += word.find_first_of(" \t\"'") != std::string::npos ? "'" + word + "'" : word;
  }
  return line;
}

}  // namespace sdpa
