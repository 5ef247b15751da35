// Attribution of recorded GPU work to forwards, on hand-made records.
#include <gtest/gtest.h>

#include "profile/cupti_library.h"
#include "profile/profile_analysis.h"

namespace sdpa {
namespace {

KernelRecord kernel(const std::string& name, uint32_t correlation, uint64_t start, uint64_t end) {
  KernelRecord k;
  k.name = name;
  k.correlation = correlation;
  k.start = start;
  k.end = end;
  k.grid = Dim3{1024, 1, 1};
  k.block = Dim3{128, 1, 1};
  k.registers_per_thread = 255;
  k.dynamic_shared = 48 * 1024;
  k.launch_type = "regular";
  return k;
}

ApiRecord api(uint64_t start, uint64_t end, uint32_t correlation) {
  ApiRecord a;
  a.start = start;
  a.end = end;
  a.correlation = correlation;
  a.name = "cudaLaunchKernel";
  return a;
}

MemcpyRecord device_copy(uint64_t bytes, uint64_t start, uint64_t end, uint32_t correlation) {
  MemcpyRecord m;
  m.kind = "DtoD";
  m.bytes = bytes;
  m.start = start;
  m.end = end;
  m.correlation = correlation;
  return m;
}

MarkerRecord marker(uint32_t id, uint64_t timestamp, bool is_start, const std::string& name) {
  MarkerRecord m;
  m.id = id;
  m.timestamp = timestamp;
  m.is_start = is_start;
  m.name = name;
  return m;
}

// Two forwards, each a launch (kernel) and a cudaMemcpyAsync, plus one kernel launched outside both.
ActivityRecords two_forwards() {
  ActivityRecords r;
  r.api_calls = {api(1100, 1150, 1), api(1200, 1250, 2), api(5100, 5150, 3), api(5200, 5300, 4), api(8000, 8100, 9)};
  r.kernels = {kernel("_Z9flash_fwdv", 1, 1300, 1800), kernel("_Z9flash_fwdv", 3, 5300, 5800),
               kernel("_Z9flash_fwdv", 9, 8200, 8300)};
  r.memcpys = {device_copy(1 << 20, 1800, 1900, 2), device_copy(1 << 20, 5900, 6100, 4)};
  return r;
}

TEST(ProfileAnalysis, AttributesByCorrelationInsideEachForward) {
  const std::vector<ForwardWindow> windows{{"p/fwd0", 1000, 2000}, {"p/fwd1", 5000, 6000}};
  const CaseProfile p = analyze_activity(two_forwards(), windows, arch_limits(9, 0), 132);
  ASSERT_EQ(p.forwards.size(), 2u);
  EXPECT_EQ(p.forwards[0].kernels, 1);
  EXPECT_EQ(p.forwards[0].memcpys, 1);
  EXPECT_EQ(p.forwards[0].memcpy_bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(p.forwards[0].kernel_us, 0.5);
  EXPECT_DOUBLE_EQ(p.forwards[0].wall_us, 0.9);  // host start to the end of the copy
  EXPECT_DOUBLE_EQ(p.forwards[1].wall_us, 1.1);
  EXPECT_EQ(p.unattributed, 1u);
  EXPECT_DOUBLE_EQ(p.kernels_per_forward(), 1.0);
  EXPECT_DOUBLE_EQ(p.memcpys_per_forward(), 1.0);

  ASSERT_EQ(p.kernels.size(), 1u);
  const KernelProfile& k = p.kernels[0];
  EXPECT_EQ(k.name, "flash_fwd");
  EXPECT_EQ(k.category, KernelCategory::fused_attention);
  EXPECT_DOUBLE_EQ(k.per_forward, 1.0);
  EXPECT_DOUBLE_EQ(k.mean_us, 0.5);
  ASSERT_TRUE(k.occupancy.has_value());
  EXPECT_DOUBLE_EQ(k.occupancy->theoretical, 0.125);

  ASSERT_EQ(p.memcpys.size(), 1u);
  EXPECT_EQ(p.memcpys[0].kind, "DtoD");
  EXPECT_DOUBLE_EQ(p.memcpys[0].per_forward, 1.0);
  EXPECT_DOUBLE_EQ(p.memcpys[0].bytes_per_forward, 1 << 20);
  EXPECT_DOUBLE_EQ(p.memcpys[0].mean_us, 0.15);
}

TEST(ProfileAnalysis, NvtxRangesTakePrecedenceOverHostTimestamps) {
  ActivityRecords r = two_forwards();
  r.markers = {marker(7, 1050, true, "p/fwd0"), marker(7, 1950, false, ""), marker(8, 5050, true, "p/fwd1"),
               marker(8, 5950, false, "")};
  // Host windows that miss every launch: only the markers can attribute the work.
  const std::vector<ForwardWindow> windows{{"p/fwd0", 0, 1}, {"p/fwd1", 2, 3}};
  const CaseProfile p = analyze_activity(r, windows, std::nullopt, 132);
  EXPECT_EQ(p.forwards[0].kernels, 1);
  EXPECT_EQ(p.forwards[1].kernels, 1);
  EXPECT_EQ(p.unattributed, 1u);
  EXPECT_EQ(p.nvtx_ranges, 2);
  EXPECT_FALSE(p.kernels[0].occupancy.has_value());  // no architecture, no occupancy
}

TEST(ProfileAnalysis, GroupsLaunchesByNameAndConfigurationInLaunchOrder) {
  ActivityRecords r;
  r.api_calls = {api(100, 110, 1), api(120, 130, 2), api(140, 150, 3)};
  KernelRecord wide = kernel("_Z4castv", 2, 400, 500);
  wide.grid = Dim3{2048, 1, 1};
  r.kernels = {kernel("_Z4castv", 1, 200, 300), wide, kernel("_Z4castv", 3, 600, 700)};
  const CaseProfile p = analyze_activity(r, {{"p/fwd0", 0, 1000}}, arch_limits(9, 0), 132);
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].grid.x, 1024);
  EXPECT_DOUBLE_EQ(p.kernels[0].per_forward, 2.0);
  EXPECT_EQ(p.kernels[1].grid.x, 2048);
  EXPECT_EQ(p.forwards[0].kernels, 3);
}

TEST(CuptiCallbackName, DropsOnlyCuptisVersionSuffix) {
  EXPECT_EQ(without_version_suffix("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(without_version_suffix("cudaLaunchKernel_ptsz_v7000"), "cudaLaunchKernel_ptsz");
  EXPECT_EQ(without_version_suffix("cuMemcpyHtoD_v2"), "cuMemcpyHtoD");
  EXPECT_EQ(without_version_suffix("cuLaunchKernelEx"), "cuLaunchKernelEx");
  EXPECT_EQ(without_version_suffix("cuGraph_vertex"), "cuGraph_vertex");
  EXPECT_EQ(without_version_suffix("name_v"), "name_v");
  EXPECT_EQ(without_version_suffix("_v12"), "_v12");
  EXPECT_EQ(without_version_suffix(""), "");
}

}  // namespace
}  // namespace sdpa
