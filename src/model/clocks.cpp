#include "model/clocks.h"

#include <fmt/format.h>

#include "model/result.h"

namespace sdpa {
namespace {

struct ReasonName {
  uint64_t bit;
  const char* id;
  const char* text;
};

constexpr ReasonName kReasons[] = {
    {kClockGpuIdle, "gpu_idle", "GPU idle"},
    {kClockApplicationsSetting, "applications_clocks_setting", "applications clocks setting"},
    {kClockSwPowerCap, "sw_power_cap", "software power cap"},
    {kClockHwSlowdown, "hw_slowdown", "hardware slowdown"},
    {kClockSyncBoost, "sync_boost", "sync boost"},
    {kClockSwThermal, "sw_thermal_slowdown", "software thermal slowdown"},
    {kClockHwThermal, "hw_thermal_slowdown", "hardware thermal slowdown"},
    {kClockHwPowerBrake, "hw_power_brake_slowdown", "hardware power brake"},
    {kClockDisplaySetting, "display_clock_setting", "display clock setting"},
};

constexpr uint64_t kPowerReasons = kClockSwPowerCap | kClockHwPowerBrake;
constexpr uint64_t kThermalReasons = kClockSwThermal | kClockHwThermal;

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

bool clock_is_low(const TimingStats& t) {
  const double fraction = clock_fraction(t);
  return fraction > 0 && fraction < kLowClockFraction;
}

// What held the clock down, in words: "power-limited", "thermal-limited, power-limited", ...
std::string low_clock_label(const std::optional<PowerSummary>& power) {
  if (!power || !power->reasons) return "clock under the peak, reason unknown (no NVML readings)";
  const uint64_t r = *power->reasons;
  std::vector<std::string> labels;
  if ((r & kThermalReasons) != 0) labels.emplace_back("thermal-limited");
  if ((r & kPowerReasons) != 0) labels.emplace_back("power-limited");
  if ((r & kClockHwSlowdown) != 0) labels.emplace_back("hardware slowdown");
  const uint64_t others = r & ~(kThermalReasons | kPowerReasons | kClockHwSlowdown | kClockGpuIdle);
  if (others != 0) labels.push_back(clock_reason_text(others));
  return labels.empty() ? "clock under the peak, no reason reported by NVML" : join(labels, ", ");
}

// "650 W mean, 698 W highest, of a 700 W limit" from what NVML could read ("" when nothing).
std::string power_text(const PowerSummary& p) {
  std::vector<std::string> parts;
  if (p.mean_w) parts.push_back(fmt::format("{:.0f} W mean", *p.mean_w));
  if (p.highest_w) parts.push_back(fmt::format("{:.0f} W highest", *p.highest_w));
  std::string text = join(parts, ", ");
  if (p.limit_w) text += fmt::format("{}{:.0f} W limit", text.empty() ? "" : " of a ", *p.limit_w);
  return text;
}

}  // namespace

std::vector<std::string> clock_reason_ids(uint64_t reasons) {
  std::vector<std::string> ids;
  for (const ReasonName& r : kReasons)
    if ((reasons & r.bit) != 0) ids.emplace_back(r.id);
  for (int bit = 9; bit < 64; ++bit)
    if ((reasons >> bit & 1u) != 0) ids.push_back(fmt::format("{:#x}", uint64_t{1} << bit));
  return ids;
}

std::string clock_reason_text(uint64_t reasons) {
  std::vector<std::string> texts;
  for (const ReasonName& r : kReasons)
    if ((reasons & r.bit) != 0) texts.emplace_back(r.text);
  for (int bit = 9; bit < 64; ++bit)
    if ((reasons >> bit & 1u) != 0)
      texts.push_back(fmt::format("reason {:#x}", uint64_t{1} << bit));
  return join(texts, ", ");
}

double clock_fraction(const TimingStats& t) {
  return t.sm_clock_mhz > 0 && t.sm_clock_peak_mhz > 0 ? t.sm_clock_mhz / t.sm_clock_peak_mhz : 0.0;
}

double clock_normalized_ms(const TimingStats& t) {
  const double fraction = clock_fraction(t);
  return fraction > 0 ? t.median_ms * fraction : 0.0;
}

std::vector<Finding> clock_findings(const TimingStats& t) {
  if (!clock_is_low(t)) return {};
  std::string text = fmt::format("{}: median SM clock {:.0f} MHz, {:.0f}% of the {:.0f} MHz peak",
                                 low_clock_label(t.power), t.sm_clock_mhz, 100 * clock_fraction(t),
                                 t.sm_clock_peak_mhz);
  if (t.power) {
    if (const std::string power = power_text(*t.power); !power.empty()) text += "; " + power;
    if (t.power->temperature_c) text += fmt::format(", {:.0f} C", *t.power->temperature_c);
  }
  text += fmt::format("; ~{:.3f} ms at the peak clock (estimate, if compute-bound)",
                      clock_normalized_ms(t));
  if (t.all_throttled)
    text += fmt::format("; every one of its {} samples ran throttled, so none could be dropped: its times are not to be "
                        "trusted",
                        t.samples);
  return {Finding{"low-clock", text}};
}

char clock_marker(const TimingStats& t) {
  if (!clock_is_low(t)) return '\0';
  const uint64_t r = t.power && t.power->reasons ? *t.power->reasons : 0;
  if ((r & kThermalReasons) != 0) return 't';
  if ((r & kPowerReasons) != 0) return 'p';
  if ((r & kClockHwSlowdown) != 0) return 'h';
  return 'c';
}

std::string clock_text(const TimingStats& t) {
  std::vector<std::string> parts;
  if (t.sm_clock_mhz > 0) {
    std::string clock = fmt::format("SM {:.0f} MHz median", t.sm_clock_mhz);
    if (t.sm_clock_peak_mhz > 0)
      clock += fmt::format(", {:.0f}% of the {:.0f} MHz peak", 100 * clock_fraction(t),
                           t.sm_clock_peak_mhz);
    parts.push_back(clock);
  }
  if (t.power) {
    const PowerSummary& p = *t.power;
    if (const std::string power = power_text(p); !power.empty()) parts.push_back("power " + power);
    if (p.temperature_c) parts.push_back(fmt::format("{:.0f} C", *p.temperature_c));
    if (p.sm_clock_mhz)
      parts.push_back(fmt::format("NVML SM clock {:.0f} MHz median", *p.sm_clock_mhz));
    if (p.reasons)
      parts.push_back("clock-event reasons: " +
                      (*p.reasons == 0 ? std::string("none") : clock_reason_text(*p.reasons)));
  }
  if (const double ms = clock_normalized_ms(t); ms > 0)
    parts.push_back(fmt::format("~{:.3f} ms at the peak clock (estimate, if compute-bound)", ms));
  return join(parts, "; ");
}

}  // namespace sdpa
