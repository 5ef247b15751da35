// The JSON form of a kernel's hardware counters and of the counter pass that read them
// (schema version 5), used by report_json_profile.cpp. Read back with every value checked.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "io/json_input.h"
#include "model/counters.h"

namespace sdpa {

nlohmann::json counters_to_json(const std::map<std::string, double>& counters);
// `j` is the counters object: metric names as keys, each a finite number in its role's range.
std::map<std::string, double> counters_from_json(const JsonFields& j);

nlohmann::json counter_source_to_json(const CounterSource& source);
CounterSource counter_source_from_json(const JsonFields& j);

}  // namespace sdpa
