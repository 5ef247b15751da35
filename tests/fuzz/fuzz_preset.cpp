// The preset reader on any text, as `--config FILE` reads it: parse, expand into problems (the
// dry run prints each one's shape, FLOPs and bytes), and the config a result carries must read
// back. InputError is the answer to bad input; any other exception, a sanitizer report or a
// failed check is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "io/preset.h"
#include "model/errors.h"
#include "model/sweep.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// Expansion is a cartesian product: a preset may ask for millions of cases, which is its right,
// not a finding; the fuzzer expands the small ones only.
constexpr std::size_t kMaxProblems = 4096;

std::size_t problem_count(const sdpa::SweepConfig& config) {
  std::size_t count = 1;
  for (const sdpa::AxisSpec& axis : sdpa::axis_table()) {
    const std::size_t n = config.values_of(axis).size();
    if (n > 0 && count > kMaxProblems / n) return kMaxProblems + 1;
    if (n > 0) count *= n;
  }
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sdpa::SweepConfig config;
  try {
    config = sdpa::parse_config(text, "fuzz.json");
  } catch (const sdpa::InputError&) {
    return 0;
  }
  if (problem_count(config) > kMaxProblems) return 0;
  std::vector<sdpa::Problem> problems;
  try {
    problems = sdpa::expand_problems(config);
  } catch (const sdpa::InputError&) {
    return 0;
  }
  check(!problems.empty());
  for (const sdpa::Problem& p : problems) {
    check(p.flops() >= 0 && p.min_bytes() > 0);
    check(!p.shape_label().empty());
  }
  // A run writes its config into the result, and `report` reads it back with parse_config.
  const sdpa::SweepConfig again = sdpa::parse_config(sdpa::config_to_json(config).dump(), "round trip");
  check(sdpa::expand_problems(again).size() == problems.size());
  return 0;
}
