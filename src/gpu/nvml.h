// NVML (libnvidia-ml.so.1, part of the driver), loaded at run time like CUPTI and cuDNN: power,
// temperature, SM clock and why the clock is held down. nvml.h is not on the build machines, so
// the few functions the tool calls are declared in nvml.cpp. Without NVML the tool runs as before.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace sdpa {

// The environment variable that names the library to load instead of libnvidia-ml.so.1.
inline constexpr const char* kNvmlLibraryVariable = "SDPA_NVML_LIBRARY";

// One device, opened through NVML: the library stays loaded and NVML initialized while it lives.
class Nvml {
 public:
  struct Library;

  // One reading; a field is empty when NVML cannot read it here (not supported, no permission).
  struct Reading {
    std::optional<double> power_w;
    std::optional<double> temperature_c;
    std::optional<double> sm_clock_mhz;
    std::optional<uint64_t> reasons;  // clock-event reason bits (nvml.h's numbering)
  };

  // Loads `library` (empty: $SDPA_NVML_LIBRARY, else libnvidia-ml.so.1), initializes NVML and finds
  // the device with this UUID ("GPU-xxxxxxxx-..."). nullptr, with the reason in `why`, on failure.
  static std::unique_ptr<Nvml> open(const std::string& device_uuid, std::string& why,
                                    const std::string& library = "");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  const std::string& description() const { return description_; }  // "NVML, driver 580.65.06, instant power (...)"
  Reading read() const;
  std::optional<double> power_limit_w() const;
  std::optional<double> energy_j() const;  // since the driver loaded (Volta and newer)
  std::optional<double> max_sm_clock_mhz() const;

 private:
  explicit Nvml(std::unique_ptr<Library> library);
  std::optional<double> instant_power_mw() const;

  std::unique_ptr<Library> library_;
  std::string description_;
  bool instant_power_ = false;  // NVML_FI_DEV_POWER_INSTANT answers here
};

}  // namespace sdpa
