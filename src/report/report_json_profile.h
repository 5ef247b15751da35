// The JSON form of a case's profile and host cost (schema version 5), used by report_json.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include "io/json_input.h"
#include "model/result.h"

namespace sdpa {

nlohmann::json profile_to_json(const CaseProfile& profile);
CaseProfile profile_from_json(const JsonFields& j);  // throws InputError naming the field

nlohmann::json host_cost_to_json(const HostCost& host);
HostCost host_cost_from_json(const JsonFields& j);

}  // namespace sdpa
