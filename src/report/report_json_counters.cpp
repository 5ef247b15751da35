#include "report/report_json_counters.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "model/errors.h"
#include "model/printable_text.h"

namespace sdpa {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxMetricName = 200;
constexpr double kMaxPercent =
    200;  // CUPTI's percentages can pass 100 a little; far past it is not a percentage
constexpr double kMaxCount = 1e18;  // bytes or nanoseconds of one launch

bool metric_name_ok(const std::string& name) {
  return !name.empty() && name.size() <= kMaxMetricName &&
         std::all_of(name.begin(), name.end(), [](unsigned char c) {
           return std::islower(c) || std::isdigit(c) || c == '_' || c == '.';
         });
}

// The range a value of `name` must lie in.
double highest_value(const std::string& name) {
  for (const CounterMetric& m : counter_metric_table()) {
    if (m.name != name) continue;
    switch (m.role) {
      case CounterRole::achieved_occupancy:
      case CounterRole::dram_throughput:
      case CounterRole::tensor_active:
      case CounterRole::sm_throughput:
      case CounterRole::l2_hit_rate:
        return kMaxPercent;
      case CounterRole::dram_read_bytes:
      case CounterRole::dram_write_bytes:
      case CounterRole::duration_ns:
        return kMaxCount;
    }
  }
  return kMaxCount;
}

}  // namespace

json counters_to_json(const std::map<std::string, double>& counters) {
  json j = json::object();
  for (const auto& [name, value] : counters) j[name] = value;
  return j;
}

std::map<std::string, double> counters_from_json(const JsonFields& j) {
  if (!j.value().is_object())
    throw InputError(fmt::format("{}: expected an object of metric name -> number", j.where()));
  std::map<std::string, double> counters;
  for (const auto& item : j.value().items()) {
    if (!metric_name_ok(item.key()))
      throw InputError(
          fmt::format("{}: \"{}\" is not a metric name (lower-case letters, digits, '_' and '.')",
                      j.where(), item.key().substr(0, 60)));
    counters[item.key()] = j.number(item.key(), 0, highest_value(item.key()));
  }
  return counters;
}

json counter_source_to_json(const CounterSource& s) {
  return json{{"api", s.api},
              {"chip", s.chip},
              {"passes", s.passes},
              {"wall_ms", s.wall_ms},
              {"unavailable", s.unavailable},
              {"expected_dram_bytes_per_forward",
               s.expected_dram_bytes ? json(*s.expected_dram_bytes) : json(nullptr)}};
}

CounterSource counter_source_from_json(const JsonFields& j) {
  CounterSource s;
  s.api = j.text("api");
  s.chip = j.text("chip");
  s.passes = static_cast<int>(j.integer("passes", 0, 100000));
  s.wall_ms = j.number("wall_ms", 0, 1e9);
  const json& unavailable = j.array("unavailable");
  for (const json& name : unavailable) {
    if (!name.is_string()) j.fail("unavailable", "an array of metric names");
    s.unavailable.push_back(printable_text(name.get<std::string>()));
  }
  if (j.has("expected_dram_bytes_per_forward") &&
      !j.raw("expected_dram_bytes_per_forward").is_null())
    s.expected_dram_bytes = j.number("expected_dram_bytes_per_forward", 0, kMaxCount);
  return s;
}

}  // namespace sdpa
