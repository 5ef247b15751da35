// The measured ceilings on disk: a cache per device (so `ceilings` measures once) and their JSON.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "io/json_input.h"
#include "model/device.h"

namespace sdpa {

// $XDG_CACHE_HOME/sdpa-prof (or ~/.cache/sdpa-prof)/ceilings-<uuid>.json
std::string ceilings_cache_path(const DeviceInfo& device);
// None when there is no cache for this device, it cannot be read, or it was measured by another
// method than `method` (an older tool's kernels): the caller measures again.
std::optional<Ceilings> load_cached_ceilings(const DeviceInfo& device, const std::string& method);
// Empty on success, else why the cache could not be written (a warning, never an error).
std::string save_ceilings(const DeviceInfo& device, const Ceilings& c);

nlohmann::json ceilings_to_json(const Ceilings& c);
Ceilings ceilings_from_json(const JsonFields& j);

}  // namespace sdpa
