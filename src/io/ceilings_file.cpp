#include "io/ceilings_file.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"

namespace sdpa {

std::string ceilings_cache_path(const DeviceInfo& device) {
  std::filesystem::path dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    dir = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dir = std::filesystem::path(home) / ".cache";
  } else {
    dir = std::filesystem::temp_directory_path();
  }
  return (dir / "sdpa-prof" / fmt::format("ceilings-{}.json", device.uuid)).string();
}

std::optional<Ceilings> load_cached_ceilings(const DeviceInfo& device) {
  std::ifstream in(ceilings_cache_path(device));
  if (!in) return std::nullopt;
  try {
    Ceilings c = ceilings_from_json(nlohmann::json::parse(in));
    if (c.device_uuid != device.uuid) return std::nullopt;
    return c;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged cache is measured again
  }
}

std::string save_ceilings(const DeviceInfo& device, const Ceilings& c) {
  const std::string path = ceilings_cache_path(device);
  try {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    write_file_atomically(path, ceilings_to_json(c).dump(2) + "\n");
  } catch (const std::exception& e) {
    return fmt::format("cannot cache the ceilings in {}: {}", path, e.what());
  }
  return {};
}

nlohmann::json ceilings_to_json(const Ceilings& c) {
  return nlohmann::json{{"device_name", c.device_name},       {"device_uuid", c.device_uuid},
                        {"bf16_gemm_tflops", c.bf16_gemm_tflops}, {"fp16_gemm_tflops", c.fp16_gemm_tflops},
                        {"copy_tb_per_s", c.copy_tb_per_s},    {"method", c.method},
                        {"measured_at", c.measured_at}};
}

Ceilings ceilings_from_json(const nlohmann::json& j) {
  Ceilings c;
  c.device_name = j.at("device_name").get<std::string>();
  c.device_uuid = j.at("device_uuid").get<std::string>();
  c.bf16_gemm_tflops = j.at("bf16_gemm_tflops").get<double>();
  c.fp16_gemm_tflops = j.at("fp16_gemm_tflops").get<double>();
  c.copy_tb_per_s = j.at("copy_tb_per_s").get<double>();
  c.method = j.value("method", "");
  c.measured_at = j.value("measured_at", "");
  return c;
}

}  // namespace sdpa
