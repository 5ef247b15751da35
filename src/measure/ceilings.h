// What the GPU can do at most, measured once and cached per device: dense 16-bit tensor-core
// GEMM rate and device-to-device copy bandwidth. Results are placed against these.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "device_info.h"

namespace sdpa {

struct Ceilings {
  std::string device_name;
  std::string device_uuid;
  double bf16_gemm_tflops = 0;
  double fp16_gemm_tflops = 0;
  double copy_tb_per_s = 0;  // bytes read plus bytes written, per second
  std::string method;        // what was measured, for the record
  std::string measured_at;   // ISO 8601, UTC
};

Ceilings measure_ceilings(const DeviceInfo& device);

// $XDG_CACHE_HOME/sdpa-prof (or ~/.cache/sdpa-prof)/ceilings-<uuid>.json
std::string ceilings_cache_path(const DeviceInfo& device);
std::optional<Ceilings> load_cached_ceilings(const DeviceInfo& device);
void save_ceilings(const DeviceInfo& device, const Ceilings& c);

nlohmann::json ceilings_to_json(const Ceilings& c);
Ceilings ceilings_from_json(const nlohmann::json& j);

}  // namespace sdpa
