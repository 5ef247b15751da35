// The "trace" object of a result written by `trace`: the command and each process it ran.
#pragma once

#include <nlohmann/json.hpp>

#include "io/json_input.h"
#include "model/trace.h"

namespace sdpa {

nlohmann::json trace_to_json(const TraceInfo& trace);
TraceInfo trace_from_json(const JsonFields& j);  // throws InputError naming the field

}  // namespace sdpa
