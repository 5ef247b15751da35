#include "gpu/nvml.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>

#include <fmt/format.h>

namespace sdpa {
namespace {

// nvml.h's types and constants, as the NVML API reference documents them.
struct NvmlDeviceRecord;  // opaque: nvmlDevice_t is a pointer to it
using nvmlDevice_t = NvmlDeviceRecord*;
using nvmlReturn_t = int;  // an enum in nvml.h
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;                  // NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;           // NVML_TEMPERATURE_GPU
constexpr unsigned kNvmlDriverVersionSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
constexpr const char* kNvmlSoname = "libnvidia-ml.so.1";
constexpr unsigned kNvmlFieldPowerInstant = 186;  // NVML_FI_DEV_POWER_INSTANT, milliwatts
enum NvmlValueType : int { kNvmlValueDouble = 0, kNvmlValueUnsigned = 1, kNvmlValueUnsignedLong = 2, kNvmlValueUnsignedLongLong = 3 };

// nvmlFieldValue_t.
struct NvmlFieldValue {
  unsigned field_id = 0;
  unsigned scope_id = 0;
  long long timestamp = 0;
  long long latency_us = 0;
  int value_type = 0;
  nvmlReturn_t result = 0;
  union {
    double as_double;
    unsigned as_unsigned;
    unsigned long as_unsigned_long;
    unsigned long long as_unsigned_long_long;
  } value{};
};

template <typename Fn>
void resolve_symbol(void* library, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

// The loaded library, its entry points (named as NVML names them) and the device handle.
struct Nvml::Library {
  void* handle = nullptr;
  bool initialized = false;
  nvmlDevice_t device = nullptr;
  std::string path;

  nvmlReturn_t (*nvmlInit_v2)() = nullptr;
  nvmlReturn_t (*nvmlShutdown)() = nullptr;
  const char* (*nvmlErrorString)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByUUID)(const char*, nvmlDevice_t*) = nullptr;
  // Optional: a reading whose function is missing stays empty.
  nvmlReturn_t (*nvmlSystemGetDriverVersion)(char*, unsigned) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetClockInfo)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMaxClockInfo)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPowerUsage)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetFieldValues)(nvmlDevice_t, int, NvmlFieldValue*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetEnforcedPowerLimit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetTemperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetTotalEnergyConsumption)(nvmlDevice_t, unsigned long long*) = nullptr;
  // nvmlDeviceGetCurrentClocksEventReasons, or on older drivers its former name
  // nvmlDeviceGetCurrentClocksThrottleReasons: the same call and bits.
  nvmlReturn_t (*clock_event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;

  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library() {
    if (initialized) nvmlShutdown();
    if (handle != nullptr) dlclose(handle);
  }

  // Finds the entry points; the name of a missing one that the tool cannot do without, or nullptr.
  const char* resolve() {
    resolve_symbol(handle, "nvmlInit_v2", nvmlInit_v2);
    resolve_symbol(handle, "nvmlShutdown", nvmlShutdown);
    resolve_symbol(handle, "nvmlErrorString", nvmlErrorString);
    resolve_symbol(handle, "nvmlDeviceGetHandleByUUID", nvmlDeviceGetHandleByUUID);
    resolve_symbol(handle, "nvmlSystemGetDriverVersion", nvmlSystemGetDriverVersion);
    resolve_symbol(handle, "nvmlDeviceGetClockInfo", nvmlDeviceGetClockInfo);
    resolve_symbol(handle, "nvmlDeviceGetMaxClockInfo", nvmlDeviceGetMaxClockInfo);
    resolve_symbol(handle, "nvmlDeviceGetPowerUsage", nvmlDeviceGetPowerUsage);
    resolve_symbol(handle, "nvmlDeviceGetFieldValues", nvmlDeviceGetFieldValues);
    resolve_symbol(handle, "nvmlDeviceGetEnforcedPowerLimit", nvmlDeviceGetEnforcedPowerLimit);
    resolve_symbol(handle, "nvmlDeviceGetTemperature", nvmlDeviceGetTemperature);
    resolve_symbol(handle, "nvmlDeviceGetTotalEnergyConsumption",
                   nvmlDeviceGetTotalEnergyConsumption);
    resolve_symbol(handle, "nvmlDeviceGetCurrentClocksEventReasons", clock_event_reasons);
    if (clock_event_reasons == nullptr)
      resolve_symbol(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", clock_event_reasons);
    if (nvmlInit_v2 == nullptr) return "nvmlInit_v2";
    if (nvmlShutdown == nullptr) return "nvmlShutdown";
    if (nvmlErrorString == nullptr) return "nvmlErrorString";
    if (nvmlDeviceGetHandleByUUID == nullptr) return "nvmlDeviceGetHandleByUUID";
    return nullptr;
  }

  std::string error_text(nvmlReturn_t r) const {
    const char* text = nvmlErrorString != nullptr ? nvmlErrorString(r) : nullptr;
    return text != nullptr ? fmt::format("{} ({})", text, r) : fmt::format("NVML error {}", r);
  }
};

std::unique_ptr<Nvml> Nvml::open(const std::string& device_uuid, std::string& why,
                                 const std::string& library) {
  std::string path = library;
  if (const char* override_path = std::getenv(kNvmlLibraryVariable);
      path.empty() && override_path != nullptr)
    path = override_path;
  if (path.empty()) path = kNvmlSoname;

  auto lib = std::make_unique<Library>();
  lib->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == nullptr) {
    why = fmt::format("NVML could not be loaded ({})", dlerror());
    return nullptr;
  }
  const link_map* map = nullptr;
  lib->path =
      dlinfo(lib->handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr ? map->l_name : path;

  if (const char* missing = lib->resolve(); missing != nullptr) {
    why = fmt::format("{} lacks {}", lib->path, missing);
    return nullptr;
  }
  if (const nvmlReturn_t r = lib->nvmlInit_v2(); r != kNvmlSuccess) {
    why = fmt::format("nvmlInit_v2 failed: {}", lib->error_text(r));
    return nullptr;
  }
  lib->initialized = true;
  if (const nvmlReturn_t r = lib->nvmlDeviceGetHandleByUUID(device_uuid.c_str(), &lib->device);
      r != kNvmlSuccess) {
    why = fmt::format("NVML does not find the device {}: {}", device_uuid, lib->error_text(r));
    return nullptr;
  }
  std::unique_ptr<Nvml> nvml(new Nvml(std::move(lib)));
  why.clear();
  return nvml;
}

Nvml::Nvml(std::unique_ptr<Library> library) : library_(std::move(library)) {
  char driver[kNvmlDriverVersionSize] = {};
  const bool have_driver =
      library_->nvmlSystemGetDriverVersion != nullptr &&
      library_->nvmlSystemGetDriverVersion(driver, sizeof(driver)) == kNvmlSuccess;
  instant_power_ = instant_power_mw().has_value();
  description_ = fmt::format("NVML, {}{} ({})", have_driver ? fmt::format("driver {}, ", driver) : "",
                             instant_power_ ? "instant power" : "power averaged over ~1 s by the driver",
                             library_->path);
}

// The power now, where the driver offers it: nvmlDeviceGetPowerUsage averages over ~1 s on Ampere
// and newer, so a short case's highest reading would trail its mean.
std::optional<double> Nvml::instant_power_mw() const {
  const Library& l = *library_;
  if (l.nvmlDeviceGetFieldValues == nullptr) return std::nullopt;
  NvmlFieldValue field;
  field.field_id = kNvmlFieldPowerInstant;
  if (l.nvmlDeviceGetFieldValues(l.device, 1, &field) != kNvmlSuccess || field.result != kNvmlSuccess)
    return std::nullopt;
  switch (field.value_type) {
    case kNvmlValueDouble: return field.value.as_double;
    case kNvmlValueUnsigned: return field.value.as_unsigned;
    case kNvmlValueUnsignedLong: return static_cast<double>(field.value.as_unsigned_long);
    case kNvmlValueUnsignedLongLong: return static_cast<double>(field.value.as_unsigned_long_long);
    default: return std::nullopt;
  }
}

Nvml::~Nvml() = default;

Nvml::Reading Nvml::read() const {
  const Library& l = *library_;
  Reading r;
  unsigned value = 0;
  if (const std::optional<double> mw = instant_power_ ? instant_power_mw() : std::nullopt)
    r.power_w = *mw / 1000.0;
  else if (l.nvmlDeviceGetPowerUsage != nullptr &&
           l.nvmlDeviceGetPowerUsage(l.device, &value) == kNvmlSuccess)
    r.power_w = value / 1000.0;  // milliwatts
  if (l.nvmlDeviceGetTemperature != nullptr &&
      l.nvmlDeviceGetTemperature(l.device, kNvmlTemperatureGpu, &value) == kNvmlSuccess)
    r.temperature_c = value;
  if (l.nvmlDeviceGetClockInfo != nullptr &&
      l.nvmlDeviceGetClockInfo(l.device, kNvmlClockSm, &value) == kNvmlSuccess)
    r.sm_clock_mhz = value;
  unsigned long long reasons = 0;
  if (l.clock_event_reasons != nullptr && l.clock_event_reasons(l.device, &reasons) == kNvmlSuccess)
    r.reasons = reasons;
  return r;
}

std::optional<double> Nvml::power_limit_w() const {
  const Library& l = *library_;
  unsigned mw = 0;
  if (l.nvmlDeviceGetEnforcedPowerLimit == nullptr ||
      l.nvmlDeviceGetEnforcedPowerLimit(l.device, &mw) != kNvmlSuccess)
    return std::nullopt;
  return mw / 1000.0;
}

std::optional<double> Nvml::energy_j() const {
  const Library& l = *library_;
  unsigned long long mj = 0;
  if (l.nvmlDeviceGetTotalEnergyConsumption == nullptr ||
      l.nvmlDeviceGetTotalEnergyConsumption(l.device, &mj) != kNvmlSuccess)
    return std::nullopt;
  return static_cast<double>(mj) / 1000.0;
}

std::optional<double> Nvml::max_sm_clock_mhz() const {
  const Library& l = *library_;
  unsigned mhz = 0;
  if (l.nvmlDeviceGetMaxClockInfo == nullptr ||
      l.nvmlDeviceGetMaxClockInfo(l.device, kNvmlClockSm, &mhz) != kNvmlSuccess)
    return std::nullopt;
  return mhz;
}

}  // namespace sdpa
