// Hardware counters without a GPU: the per-chip metric table and its check against a chip's
// base metrics, ranges of a recorded forward matched to kernels, the findings and the compare
// verdict they feed, and the JSON that carries them.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "compare/comparison.h"
#include "io/preset.h"
#include "model/errors.h"
#include "profile/counter_metrics.h"
#include "profile/counter_ranges.h"
#include "profile/findings.h"
#include "report/report.h"

namespace sdpa {
namespace {

constexpr const char* kOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
constexpr const char* kRead = "dram__bytes_read.sum";
constexpr const char* kWrite = "dram__bytes_write.sum";
constexpr const char* kDram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kSm = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kHopperTensor =
    "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_elapsed";
constexpr const char* kAmpereTensor =
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed";

// Base metric names as cuptiProfilerHostGetBaseMetrics lists them, trimmed to what matters.
std::set<std::string, std::less<>> chip_metrics(bool hopper_tensor, bool ampere_tensor,
                                                bool l2 = true) {
  std::set<std::string, std::less<>> m{"sm__warps_active", "dram__bytes_read", "dram__bytes_write",
                                       "dram__throughput", "sm__throughput",   "gpu__time_duration",
                                       "lts__t_sectors"};
  if (hopper_tensor) m.insert("sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active");
  if (ampere_tensor) m.insert("sm__pipe_tensor_op_hmma_cycles_active");
  if (l2) m.insert("lts__t_sector_hit_rate");
  return m;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(CounterMetrics, BaseNameDropsRollupAndSubmetric) {
  EXPECT_EQ(base_metric_name("dram__bytes_read.sum"), "dram__bytes_read");
  EXPECT_EQ(base_metric_name(kOccupancy), "sm__warps_active");
  EXPECT_EQ(base_metric_name("lts__t_sector_hit_rate.pct"), "lts__t_sector_hit_rate");
  EXPECT_EQ(base_metric_name("plain"), "plain");
}

TEST(CounterMetrics, EveryRoleHasAGenericNameAndHopperAndAmpereDifferForTheTensorPipe) {
  std::string hopper, ampere;
  for (const CounterMetric& m : counter_metric_table()) {
    if (m.role == CounterRole::tensor_active && m.chip == "GH100") hopper = m.name;
    if (m.role == CounterRole::tensor_active && m.chip == "GA100") ampere = m.name;
  }
  EXPECT_EQ(hopper, kHopperTensor);
  EXPECT_EQ(ampere, kAmpereTensor);
  for (const CounterRole role :
       {CounterRole::achieved_occupancy, CounterRole::dram_read_bytes,
        CounterRole::dram_write_bytes, CounterRole::dram_throughput, CounterRole::tensor_active,
        CounterRole::sm_throughput, CounterRole::l2_hit_rate, CounterRole::duration_ns})
    EXPECT_TRUE(
        std::any_of(counter_metric_table().begin(), counter_metric_table().end(),
                    [&](const CounterMetric& m) { return m.role == role && m.chip.empty(); }))
        << counter_role_id(role);
}

TEST(CounterMetrics, HopperGetsItsTensorPipeName) {
  const MetricChoice c = choose_metrics("GH100", chip_metrics(true, true));
  EXPECT_EQ(c.metrics.size(), 8u);
  EXPECT_TRUE(c.unavailable.empty());
  EXPECT_TRUE(contains(c.metrics, kHopperTensor));
  EXPECT_FALSE(contains(c.metrics, kAmpereTensor));
  EXPECT_TRUE(contains(c.metrics, kOccupancy));
}

TEST(CounterMetrics, AmpereGetsTheHmmaName) {
  const MetricChoice c = choose_metrics("GA100", chip_metrics(false, true));
  EXPECT_TRUE(contains(c.metrics, kAmpereTensor));
  EXPECT_FALSE(contains(c.metrics, kHopperTensor));
}

TEST(CounterMetrics, AnotherChipTakesTheGenericNameAndSaysWhatItLacks) {
  const MetricChoice c = choose_metrics("AD102", chip_metrics(true, true, false));
  EXPECT_TRUE(contains(c.metrics, kAmpereTensor));  // the Hopper name is for GH100 only
  ASSERT_EQ(c.unavailable.size(), 1u);
  EXPECT_NE(c.unavailable[0].find("l2_hit_rate (lts__t_sector_hit_rate.pct)"), std::string::npos)
      << c.unavailable[0];
  const MetricChoice none = choose_metrics("GH100", chip_metrics(false, false));
  EXPECT_NE(none.unavailable[0].find("tensor_active"), std::string::npos);
  EXPECT_EQ(none.metrics.size(), 7u);
}

KernelProfile kernel(const std::string& name, KernelCategory category, double per_forward,
                     double us) {
  KernelProfile k;
  k.name = k.full_name = name;
  k.category = category;
  k.per_forward = per_forward;
  k.mean_us = us;
  k.grid = Dim3{264, 1, 1};
  OccupancyEstimate o;
  o.theoretical = 0.1875;
  o.blocks_per_sm = 1;
  k.occupancy = o;
  return k;
}

TEST(CounterRanges, EachKernelGetsTheMeanOfItsLaunches) {
  CaseProfile p;
  p.kernels = {kernel("gemm", KernelCategory::tensor_core_gemm, 2, 100),
               kernel("softmax", KernelCategory::softmax, 1, 50)};
  p.launch_order = {0, 1, 0};
  const std::vector<std::string> metrics{kRead, kOccupancy};
  const std::vector<RangeValues> ranges{{100, 10}, {40, NAN}, {300, 30}};
  ASSERT_EQ(attach_counters(p, metrics, ranges), "");
  EXPECT_DOUBLE_EQ(p.kernels[0].counters.at(kRead), 200);
  EXPECT_DOUBLE_EQ(p.kernels[0].counters.at(kOccupancy), 20);
  EXPECT_DOUBLE_EQ(p.kernels[1].counters.at(kRead), 40);
  EXPECT_FALSE(p.kernels[1].counters.contains(kOccupancy));  // NaN: CUPTI had no value
}

TEST(CounterRanges, ACountThatDoesNotMatchTheForwardFillsNothing) {
  CaseProfile p;
  p.kernels = {kernel("gemm", KernelCategory::tensor_core_gemm, 2, 100)};
  p.launch_order = {0, 0};
  EXPECT_EQ(attach_counters(p, {kRead}, {{1}}),
            "the counter pass saw 1 kernel launches, the profiled forward 2");
  EXPECT_TRUE(p.kernels[0].counters.empty());
  EXPECT_NE(attach_counters(p, {kRead}, {{1, 2}, {3}}), "");
  EXPECT_TRUE(p.kernels[0].counters.empty());
}

Problem study_shape() {
  Problem p;
  p.batch = 8;
  p.heads = p.kv_heads = 16;
  p.seq_q = p.seq_kv = 1024;
  p.head_dim = 64;
  p.causal = true;
  return p;
}

// naive-inplace's forward as its counters show it: every kernel streams the scores.
CaseProfile unfused_with_counters() {
  CaseProfile p;
  KernelProfile gemm = kernel("nvjet_gemm", KernelCategory::tensor_core_gemm, 2, 100);
  gemm.counters = {{kRead, 150e6}, {kWrite, 150e6},     {kDram, 60},
                   {kSm, 70},      {kHopperTensor, 40}, {kOccupancy, 15}};
  KernelProfile scale = kernel("scale_kernel", KernelCategory::elementwise, 1, 150);
  scale.counters = {{kRead, 268e6}, {kWrite, 268e6}, {kDram, 90}, {kSm, 20}, {kOccupancy, 80}};
  KernelProfile softmax = kernel("softmax_rows", KernelCategory::softmax, 1, 160);
  softmax.counters = {{kRead, 268e6}, {kWrite, 268e6}, {kDram, 88}, {kSm, 30}, {kOccupancy, 85}};
  p.kernels = {gemm, scale, softmax};
  p.forwards = {ForwardProfile{4, 0, 0, 0, 510, 600}};
  return p;
}

TEST(CounterModel, BytesPerForwardAndTheBound) {
  const CaseProfile p = unfused_with_counters();
  EXPECT_DOUBLE_EQ(*dram_bytes_per_forward(p), 2 * 300e6 + 536e6 + 536e6);
  const ForwardBound b = *forward_bound(p);
  EXPECT_EQ(b.bound, Bound::dram);
  EXPECT_NEAR(b.dram_pct, (200 * 60 + 150 * 90 + 160 * 88) / 510.0, 1e-9);
  CaseProfile missing = p;
  missing.kernels[1].counters.erase(kWrite);
  EXPECT_FALSE(dram_bytes_per_forward(missing).has_value());  // a kernel short: no sum
  EXPECT_FALSE(dram_bytes_per_forward(CaseProfile{}).has_value());
}

const Finding* find_rule(const std::vector<Finding>& findings, const std::string& rule) {
  const auto it = std::find_if(findings.begin(), findings.end(),
                               [&](const Finding& f) { return f.rule == rule; });
  return it == findings.end() ? nullptr : &*it;
}

TEST(CounterFindings, DramBoundWithBytesAgainstTheMinimumAndTheBackendsCount) {
  CaseProfile p = unfused_with_counters();
  CounterSource s;
  s.expected_dram_bytes = 1.6e9;
  p.counters = s;
  const std::vector<Finding> f = counter_findings(p, study_shape(), 132);
  const Finding* dram = find_rule(f, "dram-bound");
  ASSERT_NE(dram, nullptr);
  EXPECT_NE(dram->text.find("DRAM-bound: 78% of peak DRAM bandwidth (SM 43%)"), std::string::npos)
      << dram->text;
  EXPECT_NE(dram->text.find("1.672 GB per forward against 0.067 GB minimum (24.9x)"),
            std::string::npos)
      << dram->text;
  EXPECT_NE(dram->text.find("own count of its passes: 1.600 GB (measured +4.5%)"),
            std::string::npos)
      << dram->text;
}

TEST(CounterFindings, ComputeBoundSaysNothingAboutDram) {
  CaseProfile p;
  KernelProfile flash = kernel("flash_fwd", KernelCategory::fused_attention, 1, 150);
  flash.counters = {{kRead, 100e6}, {kWrite, 30e6},        {kDram, 8},
                    {kSm, 52},      {kHopperTensor, 54.6}, {kOccupancy, 12}};
  flash.occupancy->theoretical = 0.125;
  p.kernels = {flash};
  const std::vector<Finding> f = counter_findings(p, study_shape(), 132);
  EXPECT_EQ(find_rule(f, "dram-bound"), nullptr);
  EXPECT_EQ(find_rule(f, "tensor-idle"), nullptr);         // 54.6% is busy enough
  EXPECT_EQ(find_rule(f, "achieved-occupancy"), nullptr);  // 12% of 12.5%
}

TEST(CounterFindings, IdleTensorPipesAndAchievedFarBelowTheoretical) {
  CaseProfile p;
  KernelProfile sgemm = kernel("sgemm_128x64", KernelCategory::simt_gemm, 2, 400);
  sgemm.counters = {{kAmpereTensor, 0}, {kOccupancy, 30}};
  sgemm.occupancy->theoretical = 0.5;
  KernelProfile cudnn =
      kernel("cudnn_generated_fort_native_sdpa", KernelCategory::fused_attention, 1, 300);
  cudnn.grid = Dim3{132, 1, 1};
  cudnn.counters = {{kHopperTensor, 31.5}, {kOccupancy, 9.0}};
  p.kernels = {sgemm, cudnn};
  const std::vector<Finding> f = counter_findings(p, study_shape(), 132);
  std::vector<std::string> idle, low;
  for (const Finding& x : f) (x.rule == "tensor-idle" ? idle : low).push_back(x.text);
  ASSERT_EQ(idle.size(), 2u);
  EXPECT_EQ(idle[0], "tensor pipes busy under half the kernel's time: sgemm_128x64 (SIMT fp32 GEMM), 0.0%");
  EXPECT_EQ(idle[1],
            "tensor pipes busy under half the kernel's time: cudnn_generated_fort_native_sdpa (fused "
            "attention), 31.5%");
  ASSERT_EQ(low.size(), 2u);
  EXPECT_EQ(low[0],
            "achieved occupancy far below theoretical (tail effect or imbalance): sgemm_128x64, 30.0% "
            "against 50.0%, 264 blocks in 2.00 waves of 132 on 132 SMs");
  EXPECT_NE(low[1].find(", 9.0% against 18.8%, 132 blocks in 1.00 waves"), std::string::npos)
      << low[1];
}

RunReport report_with(CaseProfile profile, double median_ms) {
  RunReport r;
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.sm_count = 132;
  d.total_memory = std::size_t{140} << 30;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  r.environment.device = d;
  r.environment.tool_version = "test";
  r.environment.git_sha = "0";
  r.environment.command_line = "sdpa-prof";
  CaseResult c;
  c.backend = "naive-inplace";
  c.problem = study_shape();
  c.status = CaseStatus::ok;
  TimingStats t;
  t.samples = 20;
  t.median_ms = t.min_ms = t.max_ms = median_ms;
  t.relative_spread = 0.002;
  c.timing = t;
  c.profile = std::move(profile);
  r.cases = {c};
  return r;
}

TEST(CounterJson, RoundTripsCountersAndTheirSource) {
  CaseProfile p = unfused_with_counters();
  CounterSource s{"CUPTI range profiler (auto range, user replay), API 130001",
                  "GH100",
                  9,
                  123.5,
                  {"l2_hit_rate (x)"},
                  1.6e9};
  p.counters = s;
  const RunReport original = report_with(p, 1.0);
  const nlohmann::json j = report_to_json(original);
  EXPECT_GE(j["schema_version"], 5);  // counters came with schema 5
  const nlohmann::json& kernel0 = j["cases"][0]["profile"]["kernels"][0];
  EXPECT_DOUBLE_EQ(kernel0["counters"][kRead].get<double>(), 150e6);
  EXPECT_EQ(j["cases"][0]["profile"]["counters_source"]["chip"], "GH100");
  EXPECT_DOUBLE_EQ(j["cases"][0]["roofline"]["measured_dram_bytes"].get<double>(),
                   2 * 300e6 + 2 * 536e6);
  const RunReport back = report_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(report_to_json(back), j);
  EXPECT_EQ(back.cases[0].profile->kernels[1].counters,
            original.cases[0].profile->kernels[1].counters);
  EXPECT_EQ(back.cases[0].profile->counters->passes, 9);
  EXPECT_DOUBLE_EQ(*back.cases[0].profile->counters->expected_dram_bytes, 1.6e9);
}

TEST(CounterJson, ReadsSchema4WithoutCounters) {
  nlohmann::json j = report_to_json(report_with(unfused_with_counters(), 1.0));
  j["schema_version"] = 4;
  for (nlohmann::json& k : j["cases"][0]["profile"]["kernels"]) k.erase("counters");
  j["cases"][0]["profile"].erase("counters_source");
  j["cases"][0]["profile"].erase("counters_skipped");
  const RunReport back = report_from_json(j);
  EXPECT_TRUE(back.cases[0].profile->kernels[0].counters.empty());
  EXPECT_FALSE(back.cases[0].profile->counters.has_value());
}

TEST(CounterJson, RefusesCountersThatCannotBe) {
  const nlohmann::json good = report_to_json(report_with(unfused_with_counters(), 1.0));
  const auto refused = [&](const std::function<void(nlohmann::json&)>& spoil,
                           const std::string& says) {
    nlohmann::json j = good;
    spoil(j["cases"][0]["profile"]);
    try {
      report_from_json(j);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused([](nlohmann::json& p) { p["kernels"][0]["counters"][kOccupancy] = 500; }, kOccupancy);
  refused([](nlohmann::json& p) { p["kernels"][0]["counters"][kRead] = -1; }, kRead);
  refused([](nlohmann::json& p) { p["kernels"][0]["counters"][kRead] = "many"; }, kRead);
  refused([](nlohmann::json& p) { p["kernels"][0]["counters"]["Not A Metric"] = 1; },
          "is not a metric name");
  refused([](nlohmann::json& p) { p["kernels"][0]["counters"] = nlohmann::json::array(); },
          "counters");
  refused(
      [](nlohmann::json& p) {
        p["counters_source"] = {{"api", "x"}, {"chip", "GH100"}, {"passes", -2}};
      },
      "passes");
}

TEST(CounterCompare, MoreDramBytesPerForwardIsARegressionOfItsOwn) {
  const RunReport base = report_with(unfused_with_counters(), 1.0);
  CaseProfile more = unfused_with_counters();
  more.kernels[1].counters[kRead] = 536e6;  // the scale kernel now reads the scores twice
  const Comparison c = compare_reports(base, report_with(more, 1.01), 0.05);
  ASSERT_EQ(c.cases.size(), 1u);
  EXPECT_EQ(c.cases[0].verdict, Verdict::same);
  EXPECT_TRUE(c.cases[0].regression);
  EXPECT_EQ(c.cases[0].kind, RegressionKind::dram_bytes);
  EXPECT_NEAR(*c.cases[0].dram_bytes_change, 268e6 / 1672e6, 1e-9);
  EXPECT_NE(c.cases[0].note.find("DRAM bytes per forward 1.672 -> 1.940 GB (+16.0%)"),
            std::string::npos)
      << c.cases[0].note;
  const nlohmann::json j = comparison_to_json(c);
  EXPECT_EQ(j["cases"][0]["regression_kind"], "dram-bytes");

  const Comparison same = compare_reports(base, report_with(unfused_with_counters(), 1.0), 0.05);
  EXPECT_FALSE(same.cases[0].regression);
  EXPECT_EQ(same.cases[0].kind, RegressionKind::none);
}

TEST(CounterOptions, OnByDefaultOffByFlagOrPreset) {
  const char* plain[] = {"sdpa-prof", "--seq", "128"};
  EXPECT_TRUE(parse_cli(3, plain).options.config.counters);
  const char* off[] = {"sdpa-prof", "--no-counters"};
  EXPECT_FALSE(parse_cli(2, off).options.config.counters);
  EXPECT_FALSE(parse_config(R"({"counters": false})", "test").counters);
  EXPECT_THROW(parse_config(R"({"counters": 1})", "test"), InputError);
  EXPECT_EQ(config_to_json(parse_config(R"({"counters": false})", "test"))["counters"], false);
}

TEST(CounterJson, TheEnvironmentSaysWhyThereAreNoCounters) {
  RunReport r = report_with(CaseProfile{}, 1.0);
  r.environment.counters = Profiler{false, "no permission to read GPU performance counters"};
  const RunReport back = report_from_json(nlohmann::json::parse(report_to_json(r).dump()));
  EXPECT_FALSE(back.environment.counters.enabled);
  EXPECT_EQ(back.environment.counters.description,
            "no permission to read GPU performance counters");
}

}  // namespace
}  // namespace sdpa
