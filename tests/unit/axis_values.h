// Axis values for tests: building a sweep's values and reading them back by axis name.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "model/sweep.h"

namespace sdpa::test {

inline std::vector<AxisValue> ints(std::initializer_list<int64_t> values) {
  return {values.begin(), values.end()};
}

inline std::vector<AxisValue> texts(std::initializer_list<const char*> values) {
  std::vector<AxisValue> out;
  for (const char* v : values) out.emplace_back(std::string(v));
  return out;
}

inline std::vector<AxisValue> bools(std::initializer_list<bool> values) { return {values.begin(), values.end()}; }

// The values `config` runs on the axis called `name`.
inline std::vector<AxisValue> values(const SweepConfig& config, const std::string& name) {
  return config.values_of(*find_axis(axis_table(), name));
}

}  // namespace sdpa::test
