// The clocks in the printers: the table's marker and finding, the kernels view, the JSON.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "report/report.h"

namespace sdpa {
namespace {

// cuDNN's kernel at B8 H16 S4096 D128 causal on the H200: held at its power limit.
TimingStats power_limited() {
  TimingStats t;
  t.samples = 30;
  t.median_ms = t.min_ms = t.max_ms = 1.0;
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

RunReport flash_and_cudnn() {
  RunReport r;
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.sm_count = 132;
  d.total_memory = std::size_t{141} << 30;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  d.sm_clock_khz = 1980000;
  r.environment.device = d;
  r.environment.power = PowerSource{true, "NVML, driver 580.65.06 (libnvidia-ml.so.1)"};
  Problem p;
  p.batch = 8;
  p.heads = p.kv_heads = 16;
  p.seq_q = p.seq_kv = 4096;
  p.head_dim = 128;
  p.causal = true;
  CaseResult flash;
  flash.backend = "flash";
  flash.problem = p;
  flash.status = CaseStatus::ok;
  flash.timing = power_limited();
  flash.timing->median_ms = flash.timing->min_ms = flash.timing->max_ms = 1.688;
  flash.timing->sm_clock_mhz = 1940;
  flash.timing->power->reasons = 0;
  CaseResult cudnn = flash;
  cudnn.backend = "cudnn";
  cudnn.timing = power_limited();
  r.cases = {flash, cudnn};
  return r;
}

TEST(ClocksReport, TheTableMarksThePowerLimitedTimeAndSaysWhy) {
  const std::string table = format_table(flash_and_cudnn());
  EXPECT_NE(table.find("     1.688  "), std::string::npos) << table;
  EXPECT_NE(table.find("     1.000p "), std::string::npos) << table;
  EXPECT_NE(table.find("\nfindings:\n  cudnn: power-limited, median SM clock (of the 1980 MHz peak): 1690 MHz, 85%\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("\n  flash: "), std::string::npos) << table;
  EXPECT_NE(table.find("\np, t, h, c after a time: it ran under 95% of the peak SM clock"),
            std::string::npos);
}

TEST(ClocksReport, KernelsViewGivesTheClocksOfACaseWithoutAProfile) {
  const std::string kernels = format_kernels(flash_and_cudnn());
  EXPECT_NE(kernels.find("\ncudnn B8 H16 S4096 D128 bf16 causal:\n  clocks: SM 1690 MHz median, "
                         "85% of the 1980 MHz "
                         "peak; power 650 W mean"),
            std::string::npos)
      << kernels;
  EXPECT_NE(kernels.find("clock-event reasons: none"), std::string::npos) << kernels;
}

TEST(ClocksReport, JsonCarriesClocksPowerAndReasonsAndReadsThemBack) {
  const nlohmann::json j = report_to_json(flash_and_cudnn());
  const nlohmann::json& timing = j["cases"][1]["timing"];
  EXPECT_EQ(timing["sm_clock_mhz"], 1690.0);
  EXPECT_EQ(timing["sm_clock_peak_mhz"], 1980.0);
  EXPECT_NEAR(timing["clock_normalized_ms"].get<double>(), 0.8535, 1e-4);
  EXPECT_EQ(timing["power"]["mean_w"], 650.0);
  EXPECT_EQ(timing["power"]["limit_w"], 700.0);
  EXPECT_EQ(timing["power"]["clock_event_reasons"], nlohmann::json::array({"sw_power_cap"}));
  EXPECT_EQ(j["cases"][1]["findings"][0]["rule"], "low-clock");
  EXPECT_TRUE(j["cases"][0]["findings"].empty());
  EXPECT_EQ(j["environment"]["power"]["enabled"], true);
  const RunReport back = report_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(report_to_json(back), j);
  EXPECT_EQ(*back.cases[1].timing->power->reasons, uint64_t{kClockSwPowerCap});
  EXPECT_FALSE(back.cases[1].timing->power->sm_clock_mhz.has_value());
}

TEST(ClocksReport, AResultWithoutPowerReadsAndStillShowsTheLowClock) {
  // The H200 run at S4096 D128 (schema 3): cuDNN at 1676 MHz, no NVML readings, no per-case peak.
  std::ifstream in(SDPA_SOURCE_DIR "/tests/data/result-h200-d128.json");
  const RunReport r = report_from_json(nlohmann::json::parse(in));
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_FALSE(r.cases[2].timing->power.has_value());
  EXPECT_EQ(r.cases[2].timing->sm_clock_peak_mhz, 1980.0);
  TableOptions wide_lines;
  wide_lines.style.width = 1000;  // one line per finding
  const std::string table = format_table(r, wide_lines);
  EXPECT_NE(table.find("\n  cudnn: clock under the peak, reason unknown (no NVML readings), median SM clock (of the "
                       "1980 MHz peak): 1676 MHz, 85%\n"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("1.006c"), std::string::npos) << table;
}

}  // namespace
}  // namespace sdpa
