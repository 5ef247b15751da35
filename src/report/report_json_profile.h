// The JSON form of a case's profile and host cost (schema version 4), used by report_json.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include "model/result.h"

namespace sdpa {

nlohmann::json profile_to_json(const CaseProfile& profile);
CaseProfile profile_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception, std::invalid_argument

nlohmann::json host_cost_to_json(const HostCost& host);
HostCost host_cost_from_json(const nlohmann::json& j);

}  // namespace sdpa
