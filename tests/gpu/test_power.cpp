// NVML on the GPU machine: the device opens by its CUDA UUID, and the sampler reads power,
// temperature, clocks and clock-event reasons while samples run. NVML must open here, unless
// SDPA_TEST_EXPECT_ABSENT names it.
#include <gtest/gtest.h>

#include "gpu/device_buffer.h"
#include "gpu/nvml.h"
#include "gpu_test_support.h"
#include "measure/l2_flush.h"

namespace sdpa {
namespace {

TEST(Power, NvmlReadsTheDeviceWhileSamplesRun) {
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  std::string why;
  const std::unique_ptr<Nvml> nvml = Nvml::open(device.uuid, why);
  SDPA_REQUIRE_LIBRARY(nvml, "nvml", why);
  const Nvml::Reading r = nvml->read();
  EXPECT_TRUE(r.power_w.has_value());
  EXPECT_TRUE(r.temperature_c.has_value());
  EXPECT_TRUE(r.sm_clock_mhz.has_value());
  EXPECT_TRUE(r.reasons.has_value());
  ASSERT_TRUE(nvml->power_limit_w().has_value());
  ASSERT_TRUE(nvml->max_sm_clock_mhz().has_value());
  EXPECT_NEAR(*nvml->max_sm_clock_mhz(), device.sm_clock_khz / 1000.0, 50)
      << "NVML's peak and the runtime's";

  // A memory-bound "forward" (the L2 flush itself) sampled for about 0.3 s with NVML on.
  L2Flush work(device.l2_bytes);
  CudaStream stream;
  TimingOptions options = one_sample_timing();
  options.stopping.min_samples = 10;
  options.stopping.min_time_s = 0.3;
  options.stopping.timeout_s = 0.3;
  options.nvml = nvml.get();
  const TimingStats t =
      time_forward([&](cudaStream_t s) { work.flush(s); }, stream.get(), options, device);
  EXPECT_GT(t.sm_clock_mhz, 0);
  EXPECT_EQ(t.sm_clock_peak_mhz, device.sm_clock_khz / 1000.0);
  ASSERT_TRUE(t.power.has_value());
  EXPECT_GE(t.power->readings, 10);
  ASSERT_TRUE(t.power->mean_w.has_value());
  EXPECT_GT(*t.power->mean_w, 0);
  EXPECT_LE(*t.power->highest_w, 1.2 * *t.power->limit_w);
  EXPECT_TRUE(t.power->reasons.has_value());
  EXPECT_FALSE(clock_text(t).empty());
}

}  // namespace
}  // namespace sdpa
