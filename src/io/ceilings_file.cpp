#include "io/ceilings_file.h"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/json_input.h"

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

std::optional<Ceilings> load_cached_ceilings(const DeviceInfo& device, const std::string& method) {
  const std::string path = ceilings_cache_path(device);
  if (!std::filesystem::exists(path)) return std::nullopt;
  try {
    Ceilings c = ceilings_from_json(JsonFields(read_untrusted_json_file(path, 1 << 20), path));
    if (c.device_uuid != device.uuid) return std::nullopt;
    if (c.read_tb_per_s == 0 || c.method != method) return std::nullopt;  // an older tool's: measured again
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
                        {"copy_tb_per_s", c.copy_tb_per_s},    {"read_tb_per_s", c.read_tb_per_s},
                        {"method", c.method},
                        {"measured_at", c.measured_at}};
}

Ceilings ceilings_from_json(const JsonFields& j) {
  Ceilings c;
  c.device_name = j.text("device_name");
  c.device_uuid = j.text("device_uuid");
  c.bf16_gemm_tflops = j.number("bf16_gemm_tflops", 1e-6, 1e6);
  c.fp16_gemm_tflops = j.number("fp16_gemm_tflops", 1e-6, 1e6);
  c.copy_tb_per_s = j.number("copy_tb_per_s", 1e-6, 1e6);
  c.read_tb_per_s = j.number_or("read_tb_per_s", 0.0, 0, 1e6);  // schema 6; older: unknown
  c.method = j.text_or("method", "");
  c.measured_at = j.text_or("measured_at", "");
  return c;
}

}  // namespace sdpa
