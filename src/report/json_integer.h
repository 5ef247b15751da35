// Integers read from a result file. nlohmann's get<int>() converts a float without a check, and
// a float out of the integer's range is undefined behaviour ("warmup": 1e300 was); these take an
// integer in range only, and throw std::invalid_argument (report_from_json's "malformed") else.
#pragma once

#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/number_text.h"

namespace sdpa {

template <typename Int>
Int integer_of(const nlohmann::json& v, const char* key, Int low = std::numeric_limits<Int>::min(),
               Int high = std::numeric_limits<Int>::max()) {
  const auto in_range = [&](auto x) { return std::cmp_greater_equal(x, low) && std::cmp_less_equal(x, high); };
  if (v.is_number_unsigned() && in_range(v.get<uint64_t>())) return static_cast<Int>(v.get<uint64_t>());
  if (v.is_number_integer() && !v.is_number_unsigned() && in_range(v.get<int64_t>()))
    return static_cast<Int>(v.get<int64_t>());
  throw std::invalid_argument(
      fmt::format("\"{}\": expected an integer from {} to {}, got {}", key, low, high, echo(v.dump())));
}

// j[key], which must be there.
template <typename Int>
Int integer_at(const nlohmann::json& j, const char* key) {
  return integer_of<Int>(j.at(key), key);
}

// j[key], or `fallback` when j has no such key.
template <typename Int>
Int integer_or(const nlohmann::json& j, const char* key, Int fallback, Int low = std::numeric_limits<Int>::min(),
               Int high = std::numeric_limits<Int>::max()) {
  const auto it = j.find(key);
  return it == j.end() ? fallback : integer_of<Int>(*it, key, low, high);
}

}  // namespace sdpa
