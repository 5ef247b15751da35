// The clock rules of the model (finding, marker, time at the peak clock), the power summary and
// the NVML loader's failure paths: no GPU needed.
#include <gtest/gtest.h>

#include <cstdlib>

#include "gpu/nvml.h"
#include "measure/power_monitor.h"
#include "model/result.h"

namespace sdpa {
namespace {

// cuDNN's kernel at B8 H16 S4096 D128 causal on the H200: held at its power limit.
TimingStats power_limited() {
  TimingStats t;
  t.median_ms = 1.0;
  t.sm_clock_mhz = 1690;
  t.sm_clock_peak_mhz = 1980;
  PowerSummary p;
  p.mean_w = 650;
  p.highest_w = 698;
  p.limit_w = 700;
  p.temperature_c = 61;
  p.reasons = kClockSwPowerCap;
  p.readings = 80;
  t.power = p;
  return t;
}

TEST(Clocks, PowerLimitedCaseGetsAFindingNamingTheReason) {
  const std::vector<Finding> f = clock_findings(power_limited());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].rule, "low-clock");
  EXPECT_EQ(f[0].text,
            "power-limited: median SM clock 1690 MHz, 85% of the 1980 MHz peak; 650 W mean, 698 W "
            "highest of a "
            "700 W limit, 61 C; ~0.854 ms at the peak clock (estimate, if compute-bound)");
  EXPECT_EQ(clock_marker(power_limited()), 'p');
}

TEST(Clocks, NoFindingAtOrAbove95PercentOfThePeak) {
  TimingStats t = power_limited();
  t.sm_clock_mhz = 1940;  // our flash kernel in the same run
  EXPECT_TRUE(clock_findings(t).empty());
  EXPECT_EQ(clock_marker(t), '\0');
  t.sm_clock_mhz = 1881;  // exactly 95%
  EXPECT_TRUE(clock_findings(t).empty());
}

TEST(Clocks, NoFindingWithoutClocks) {
  TimingStats t;
  t.median_ms = 1.0;
  EXPECT_TRUE(clock_findings(t).empty());
  EXPECT_EQ(clock_normalized_ms(t), 0.0);
  EXPECT_EQ(clock_text(t), "");
  t.sm_clock_mhz = 1500;  // a result without the peak
  EXPECT_TRUE(clock_findings(t).empty());
}

TEST(Clocks, WithoutNvmlTheReasonIsUnknownButTheClockIsStillNamed) {
  TimingStats t = power_limited();
  t.power.reset();
  const std::vector<Finding> f = clock_findings(t);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].text,
            "clock under the peak, reason unknown (no NVML readings): median SM clock 1690 MHz, "
            "85% of the 1980 MHz "
            "peak; ~0.854 ms at the peak clock (estimate, if compute-bound)");
  EXPECT_EQ(clock_marker(t), 'c');
}

TEST(Clocks, ThermalAndHardwareSlowdownAreNamed) {
  TimingStats t = power_limited();
  t.power->reasons = kClockSwPowerCap | kClockHwThermal;
  EXPECT_EQ(clock_findings(t)[0].text.rfind("thermal-limited, power-limited: ", 0), 0u);
  EXPECT_EQ(clock_marker(t), 't');
  t.power->reasons = kClockHwSlowdown;
  EXPECT_EQ(clock_findings(t)[0].text.rfind("hardware slowdown: ", 0), 0u);
  EXPECT_EQ(clock_marker(t), 'h');
  t.power->reasons = 0;
  EXPECT_EQ(
      clock_findings(t)[0].text.rfind("clock under the peak, no reason reported by NVML: ", 0), 0u);
}

TEST(Clocks, NormalizedTimeIsTheTimeAtThePeakClock) {
  TimingStats t = power_limited();
  EXPECT_NEAR(clock_normalized_ms(t), 1690.0 / 1980.0, 1e-12);
}

TEST(Clocks, ReasonBitsHaveNvmlNames) {
  EXPECT_EQ(clock_reason_ids(kClockSwPowerCap | kClockHwThermal),
            (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_EQ(clock_reason_ids(uint64_t{1} << 12), std::vector<std::string>{"0x1000"});
  EXPECT_EQ(clock_reason_text(kClockSwPowerCap | kClockHwSlowdown),
            "software power cap, hardware slowdown");
  EXPECT_EQ(clock_reason_text(0), "");
}

TEST(Clocks, KernelsViewLine) {
  EXPECT_EQ(clock_text(power_limited()),
            "SM 1690 MHz median, 85% of the 1980 MHz peak; power 650 W mean, 698 W highest of a "
            "700 W limit; 61 C; "
            "clock-event reasons: software power cap; ~0.854 ms at the peak clock (estimate, if "
            "compute-bound)");
}

TEST(PowerSummary, EnergyGivesTheMeanAndReasonsAreOredWithoutIdle) {
  std::vector<Nvml::Reading> readings(3);
  readings[0] = {680.0, 58.0, 1700.0, uint64_t{kClockGpuIdle}};
  readings[1] = {699.0, 61.0, 1680.0, uint64_t{kClockSwPowerCap}};
  readings[2] = {std::nullopt, 60.0, 1720.0, uint64_t{kClockSwPowerCap | kClockGpuIdle}};
  const PowerSummary s = summarize_power(readings, 130.0, 0.2, 700.0);
  EXPECT_EQ(s.readings, 3);
  EXPECT_DOUBLE_EQ(*s.mean_w, 650.0);
  EXPECT_DOUBLE_EQ(*s.highest_w, 699.0);
  EXPECT_DOUBLE_EQ(*s.limit_w, 700.0);
  EXPECT_DOUBLE_EQ(*s.temperature_c, 61.0);
  EXPECT_DOUBLE_EQ(*s.sm_clock_mhz, 1700.0);
  EXPECT_EQ(*s.reasons, uint64_t{kClockSwPowerCap});
}

TEST(PowerSummary, WithoutTheEnergyCounterTheReadingsGiveTheMean) {
  std::vector<Nvml::Reading> readings(2);
  readings[0].power_w = 600.0;
  readings[1].power_w = 700.0;
  const PowerSummary s = summarize_power(readings, std::nullopt, 0.2, std::nullopt);
  EXPECT_DOUBLE_EQ(*s.mean_w, 650.0);
  EXPECT_FALSE(s.limit_w.has_value());
  EXPECT_FALSE(s.reasons.has_value());  // unknown, not "none seen"
  EXPECT_FALSE(s.temperature_c.has_value());
}

TEST(Nvml, AMissingLibraryIsAReasonNotAFailure) {
  std::string why;
  EXPECT_EQ(
      Nvml::open("GPU-00000000-0000-0000-0000-000000000000", why, "/nonexistent/libnvidia-ml.so.1"),
      nullptr);
  EXPECT_NE(why.find("NVML could not be loaded"), std::string::npos) << why;
  EXPECT_NE(why.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << why;
}

TEST(Nvml, TheEnvironmentVariableNamesTheLibrary) {
  ASSERT_EQ(setenv(kNvmlLibraryVariable, "/nonexistent/nvml-from-env.so", 1), 0);
  std::string why;
  EXPECT_EQ(Nvml::open("GPU-00000000-0000-0000-0000-000000000000", why), nullptr);
  unsetenv(kNvmlLibraryVariable);
  EXPECT_NE(why.find("/nonexistent/nvml-from-env.so"), std::string::npos) << why;
}

TEST(Nvml, ALibraryWithoutNvmlIsRefused) {
  std::string why;
  EXPECT_EQ(Nvml::open("GPU-00000000-0000-0000-0000-000000000000", why, "libm.so.6"), nullptr);
  EXPECT_NE(why.find("lacks nvmlInit_v2"), std::string::npos) << why;
}

}  // namespace
}  // namespace sdpa
