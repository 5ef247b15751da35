// The command line's numbers and lists: a value flag's text, whole and split at commas as CLI11
// splits a list (delimiter ','), through model/number_text.h and parse_axis_text of every axis.
// InputError is the answer to bad input; any other exception, a sanitizer report or a failed
// check (a value out of its range, a canonical text that does not read back) is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <variant>

#include <fmt/format.h>

#include "model/axes.h"
#include "model/errors.h"
#include "model/number_text.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void check_numbers(std::string_view text) {
  if (const auto v = sdpa::decimal_integer(text)) check(sdpa::decimal_integer(fmt::format("{}", *v)) == v);
  if (const auto v = sdpa::decimal_unsigned(text)) check(sdpa::decimal_unsigned(fmt::format("{}", *v)) == v);
  if (const auto v = sdpa::finite_number(text)) {
    check(std::isfinite(*v));
    check(sdpa::finite_number(fmt::format("{}", *v)) == v);
  }
  // The ranges the CLI uses (--warmup, --min-samples) and the widest one.
  constexpr int64_t kRanges[][2] = {{0, 1000000}, {1, 100000}, {std::numeric_limits<int64_t>::min(),
                                                                std::numeric_limits<int64_t>::max()}};
  for (const auto& [low, high] : kRanges) {
    try {
      const int64_t v = sdpa::integer_in("--n", text, low, high);
      check(low <= v && v <= high);
    } catch (const sdpa::InputError&) {
    }
  }
  for (const bool inclusive : {false, true}) {
    try {
      const double v = sdpa::number_above("--x", text, 0, inclusive);
      check(std::isfinite(v) && (inclusive ? v >= 0 : v > 0));
    } catch (const sdpa::InputError&) {
    }
  }
  check(sdpa::echo(text).size() <= 80);
}

void check_axes(std::string_view text) {
  for (const sdpa::AxisSpec& axis : sdpa::axis_table()) {
    sdpa::AxisValue value;
    try {
      value = sdpa::parse_axis_text(axis, text);
    } catch (const sdpa::InputError&) {
      continue;
    }
    switch (axis.type) {
      case sdpa::AxisType::positive_integer:
        check(std::get<int64_t>(value) > 0);
        break;
      case sdpa::AxisType::positive_number:
        check(std::isfinite(std::get<double>(value)) && std::get<double>(value) > 0);
        break;
      case sdpa::AxisType::boolean:
        std::get<bool>(value);
        break;
      case sdpa::AxisType::choice:
        std::get<std::string>(value);
        break;
    }
    // The canonical text (CSV, case keys) reads back as the same value.
    check(sdpa::parse_axis_text(axis, sdpa::axis_value_text(value)) == value);
    sdpa::Problem p;
    axis.apply(p, value);
    check(axis.read(p) == value);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The flags without a list (--seed, --warmup, --threshold, ...) take the text whole.
  if (text.find(',') != std::string_view::npos) check_numbers(text);
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    check_numbers(item);
    check_axes(item);
    start = comma + 1;
  }
  return 0;
}
