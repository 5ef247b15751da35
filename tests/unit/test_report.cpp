#include <gtest/gtest.h>

#include "axis_values.h"
#include "model/errors.h"
#include "recorded_results.h"

#include <functional>

#include <nlohmann/json.hpp>

#include "model/case_key.h"
#include "report/report.h"

namespace sdpa {
namespace {

// naive-inplace's shape: two tensor-core GEMMs, scale, masked fill, softmax; no copy.
CaseProfile inplace_profile() {
  CaseProfile prof;
  KernelProfile gemm;
  gemm.name = gemm.full_name = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1";
  gemm.category = KernelCategory::tensor_core_gemm;
  gemm.per_forward = 2;
  gemm.mean_us = 150;
  gemm.grid = Dim3{8, 8, 128};
  gemm.block = Dim3{384, 1, 1};
  gemm.registers_per_thread = 168;
  gemm.dynamic_shared = 134 * 1024;
  gemm.shared_config = 228 * 1024;
  gemm.launch_type = "regular";
  gemm.occupancy = OccupancyEstimate{1, 0.1875, kLimitRegisters | kLimitSharedMemory, 1, 1, 5, 32, 0.0};
  KernelProfile softmax;
  softmax.name = "softmax_rows_in_registers_kernel<__nv_bfloat16, 4>";
  softmax.full_name = "void sdpa::(anonymous namespace)::softmax_rows_in_registers_kernel<__nv_bfloat16, 4>(__nv_bfloat16 const*, __nv_bfloat16*, long)";
  softmax.category = KernelCategory::softmax;
  softmax.per_forward = 1;
  softmax.mean_us = 200;
  softmax.grid = Dim3{32768, 1, 1};
  softmax.block = Dim3{256, 1, 1};
  softmax.registers_per_thread = 32;
  softmax.launch_type = "regular";
  softmax.occupancy = OccupancyEstimate{8, 1.0, kLimitWarps, 8, 32, 8, 32, 1.0};
  KernelProfile fill = softmax;
  fill.name = fill.full_name = "masked_fill_kernel<__nv_bfloat16>";
  fill.category = KernelCategory::elementwise;
  fill.per_forward = 2;
  fill.mean_us = 100;
  prof.kernels = {gemm, fill, softmax};
  prof.forwards = {ForwardProfile{5, 0, 0, 0, 700, 800}, ForwardProfile{5, 0, 0, 0, 700, 780}};
  prof.findings = {
      Finding{"low-occupancy", "low occupancy: " + gemm.name + " at 18.8% theoretical"},
      Finding{"dropped-records", "CUPTI dropped 3 activity records: the counts above are lower bounds"}};
  return prof;
}

TimingStats timing_of(double median, double min, double max, double spread, bool converged) {
  TimingStats t;
  t.relative_spread = spread;
  t.converged = converged;
  t.warmup = 3;
  t.samples = 20;
  t.median_ms = median;
  t.min_ms = min;
  t.max_ms = max;
  return t;
}

RunReport sample_report() {
  RunReport r;
  r.config.axes["seq"] = test::ints({1024});
  r.environment = Environment{"0.1.0", "abc123", "sdpa-prof --seq 1024", "host", "2026-12-02T12:00:00Z", 42, {},
                              Profiler{true, "CUPTI API 130001 (libcupti.so.13)"}, std::nullopt, {}, {}};
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.uuid = "GPU-00000000-0000-0000-0000-000000000000";
  d.cc_major = 9;
  d.sm_count = 132;
  d.total_memory = 150000000000;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  d.cublas_version = 130100;
  r.environment.device = d;
  Ceilings ceilings;
  ceilings.device_name = d.name;
  ceilings.device_uuid = d.uuid;
  ceilings.bf16_gemm_tflops = 790;
  ceilings.fp16_gemm_tflops = 795;
  ceilings.copy_tb_per_s = 4.2;
  r.environment.ceilings = ceilings;

  Problem p;
  p.batch = 8;
  p.heads = 16;
  p.kv_heads = 16;
  p.seq_q = p.seq_kv = 1024;
  p.head_dim = 64;
  p.causal = true;

  // Fields by name: the result model grows, and these cases should not have to follow each field.
  const auto make_case = [&](const char* backend, CaseStatus status, const char* reason, std::size_t predicted,
                             std::optional<Verification> verification, std::optional<TimingStats> timing,
                             std::optional<CaseProfile> profile, std::optional<HostCost> host) {
    CaseResult c;
    c.backend = backend;
    c.problem = p;
    c.status = status;
    c.reason = reason;
    c.predicted_bytes = predicted;
    c.verification = verification;
    c.timing = timing;
    c.profile = profile;
    c.host = host;
    return c;
  };
  const CaseResult fast = make_case("naive-inplace", CaseStatus::ok, "", 900000000,
                                    Verification{4e-3, 0.03, 0, 2e-2, 0.25, true},
                                    timing_of(1.0, 0.98, 1.2, 0.003, true), inplace_profile(), HostCost{1.5, 2500, 12.5, 10});
  const CaseResult slow = make_case("math", CaseStatus::ok, "", 1700000000, Verification{1e-6, 1e-5, 0, 2e-2, 0.25, true},
                                    timing_of(3.0, 2.9, 3.5, 0.021, false), std::nullopt, HostCost{0.5, 900, 40.0, 10});
  const CaseResult failed = make_case("naive", CaseStatus::failed, "verification failed", 900000000,
                                      Verification{0.5, 3.0, 7, 2e-2, 0.25, false}, std::nullopt, std::nullopt,
                                      HostCost{1.0, 800, 0, 0});
  const CaseResult skipped = make_case("flash", CaseStatus::skipped, "not built: not implemented in this version", 0,
                                       std::nullopt, std::nullopt, std::nullopt, std::nullopt);
  r.cases = {fast, slow, failed, skipped};
  return r;
}

TEST(JsonReport, RoundTripsTheResultModel) {
  const RunReport original = sample_report();
  const nlohmann::json j = report_to_json(original);
  EXPECT_EQ(j["schema_version"], kResultSchemaVersion);
  const RunReport back = report_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(report_to_json(back), j);
  ASSERT_EQ(back.cases.size(), 4u);
  EXPECT_EQ(back.cases[2].status, CaseStatus::failed);
  EXPECT_EQ(back.cases[2].verification->non_finite, 7u);
  EXPECT_DOUBLE_EQ(back.cases[1].timing->median_ms, 3.0);
  EXPECT_EQ(back.environment.device->name, "NVIDIA H200");
  EXPECT_TRUE(back.environment.profiler.enabled);
  ASSERT_TRUE(back.cases[0].profile.has_value());
  EXPECT_DOUBLE_EQ(back.cases[0].profile->kernels_per_forward(), 5.0);
  EXPECT_EQ(back.cases[0].profile->kernels[0].occupancy->limiters, kLimitRegisters | kLimitSharedMemory);
  EXPECT_EQ(back.cases[0].profile->findings, original.cases[0].profile->findings);
  EXPECT_DOUBLE_EQ(back.cases[1].host->per_call_us, 40.0);
  EXPECT_FALSE(back.cases[1].profile.has_value());
}

TEST(JsonReport, ReadsSchemaVersion1) {
  nlohmann::json v1 = report_to_json(sample_report());
  v1["schema_version"] = 1;
  v1["environment"].erase("profiler");
  for (nlohmann::json& c : v1["cases"]) {
    c.erase("profile");
    c.erase("host");
  }
  const RunReport back = report_from_json(v1);
  EXPECT_FALSE(back.environment.profiler.enabled);
  EXPECT_FALSE(back.cases[0].profile.has_value());
  EXPECT_FALSE(back.cases[0].host.has_value());
}

TEST(JsonReport, CarriesTheWholeProfile) {
  const nlohmann::json j = report_to_json(sample_report());
  const nlohmann::json& profile = j["cases"][0]["profile"];
  EXPECT_EQ(profile["kernels_per_forward"], 5.0);
  EXPECT_EQ(profile["forwards"].size(), 2u);
  const nlohmann::json& gemm = profile["kernels"][0];
  EXPECT_EQ(gemm["category"], "tensor_core_gemm");
  EXPECT_EQ(gemm["grid"], nlohmann::json::array({8, 8, 128}));
  EXPECT_EQ(gemm["occupancy"]["limited_by"], nlohmann::json::array({"registers", "shared memory"}));
  EXPECT_EQ(gemm["occupancy"]["profiler_style"], 0.0);
  EXPECT_EQ(j["cases"][0]["host"]["per_call_us"], 12.5);
  EXPECT_EQ(j["environment"]["profiler"]["enabled"], true);
}

// A backward case keeps its pass and the tensor its verification figures are of; a file from
// before the pass axis (no "pass", no "tensor") reads as forwards checked on O.
TEST(JsonReport, CarriesThePassAndTheVerifiedTensor) {
  RunReport report = sample_report();
  report.cases[0].problem.pass = AttentionPass::backward;
  report.cases[0].verification->tensor = "dK";
  const nlohmann::json j = report_to_json(report);
  EXPECT_EQ(j["cases"][0]["problem"]["pass"], "bwd");
  EXPECT_EQ(j["cases"][0]["verification"]["tensor"], "dK");
  EXPECT_DOUBLE_EQ(j["cases"][0]["problem"]["flops"].get<double>(), 2.5 * 4.0 * 8 * 16 * 64 * (1024.0 * 1025 / 2));
  const RunReport back = report_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.cases[0].problem.pass, AttentionPass::backward);
  EXPECT_EQ(back.cases[0].verification->tensor, "dK");
  EXPECT_NE(case_key("naive", back.cases[0].problem), case_key("naive", back.cases[1].problem));

  nlohmann::json old = report_to_json(sample_report());
  old["schema_version"] = 5;
  for (nlohmann::json& c : old["cases"]) {
    c["problem"].erase("pass");
    if (c.contains("verification")) c["verification"].erase("tensor");
  }
  const RunReport before = report_from_json(old);
  EXPECT_EQ(before.cases[0].problem.pass, AttentionPass::forward);
  EXPECT_EQ(before.cases[0].verification->tensor, "O");

  nlohmann::json bad = j;
  bad["cases"][0]["problem"]["pass"] = "backward";
  EXPECT_THROW(report_from_json(bad), InputError);
  bad = j;
  bad["cases"][0]["verification"]["tensor"] = "dX";
  EXPECT_THROW(report_from_json(bad), InputError);
}

// A graph case keeps its launch; a file from before the launch axis (schema 6, no "launch") reads
// as eager cases, with the keys an eager case of this version has.
TEST(JsonReport, CarriesTheLaunch) {
  RunReport report = sample_report();
  report.cases[0].problem.launch = LaunchMode::graph;
  const nlohmann::json j = report_to_json(report);
  EXPECT_EQ(j["cases"][0]["problem"]["launch"], "graph");
  EXPECT_EQ(j["cases"][1]["problem"]["launch"], "eager");
  const RunReport back = report_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.cases[0].problem.launch, LaunchMode::graph);
  EXPECT_EQ(back.cases[1].problem.launch, LaunchMode::eager);
  EXPECT_EQ(case_key(back.cases[0].backend, back.cases[0].problem), case_key(report.cases[0].backend, report.cases[0].problem));
  Problem eager = back.cases[0].problem;
  eager.launch = LaunchMode::eager;
  EXPECT_NE(case_key("naive", back.cases[0].problem), case_key("naive", eager));

  nlohmann::json old = report_to_json(sample_report());
  old["schema_version"] = 6;
  for (nlohmann::json& c : old["cases"]) c["problem"].erase("launch");
  const RunReport before = report_from_json(old);
  for (const CaseResult& c : before.cases) EXPECT_EQ(c.problem.launch, LaunchMode::eager);
  EXPECT_EQ(case_key(before.cases[0].backend, before.cases[0].problem),
            case_key(sample_report().cases[0].backend, sample_report().cases[0].problem));

  nlohmann::json bad = j;
  bad["cases"][0]["problem"]["launch"] = "captured";
  EXPECT_THROW(report_from_json(bad), InputError);
}

TEST(JsonReport, SaysWhichFlopCountItUses) {
  const nlohmann::json j = report_to_json(sample_report());
  EXPECT_NE(j["flop_count"].get<std::string>().find("unmasked"), std::string::npos);
  EXPECT_DOUBLE_EQ(j["cases"][0]["problem"]["flops"].get<double>(), 4.0 * 8 * 16 * 64 * (1024.0 * 1025 / 2));
}

TEST(JsonReport, RejectsWhatIsNotAResult) {
  EXPECT_THROW(report_from_json(nlohmann::json{{"hello", 1}}), InputError);
  nlohmann::json future = report_to_json(sample_report());
  future["schema_version"] = kResultSchemaVersion + 1;
  EXPECT_THROW(report_from_json(future), InputError);
  nlohmann::json truncated = report_to_json(sample_report());
  truncated["cases"][0].erase("problem");
  EXPECT_THROW(report_from_json(truncated), InputError);
}

TEST(JsonReport, RejectsCountsThatAreNotIntegersInRange) {
  // nlohmann's get<int>() of a float out of range is undefined behaviour (the result fuzzer).
  const auto rejects = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = report_to_json(sample_report());
    edit(j);
    EXPECT_THROW(report_from_json(j), InputError) << j.dump().substr(0, 200);
  };
  rejects([](nlohmann::json& j) { j["cases"][0]["timing"]["warmup"] = 1e300; });
  rejects([](nlohmann::json& j) { j["cases"][0]["timing"]["samples"] = 2.5; });
  rejects([](nlohmann::json& j) { j["cases"][2]["verification"]["non_finite"] = -1.5; });
  rejects([](nlohmann::json& j) { j["cases"][0]["profile"]["kernels"][0]["grid"][0] = int64_t{1} << 40; });
  rejects([](nlohmann::json& j) { j["environment"]["device"]["sm_clock_peak_mhz"] = 2147483647; });
  rejects([](nlohmann::json& j) { j["schema_version"] = 4.0; });
}

TEST(TableReport, ReadsTimingsOnCasesThatAreNotOk) {
  // A file may carry what the tool never writes: a skipped case with a timing, an ok case without.
  RunReport r = sample_report();
  r.cases[3].timing = timing_of(2.0, 1.9, 2.1, 0.01, true);
  r.cases[3].problem.seq_q = r.cases[3].problem.seq_kv = 2048;
  r.cases[1].timing.reset();
  const std::string table = format_table(r);
  EXPECT_NE(table.find("2.000"), std::string::npos) << table;
}

// The compact table at the width of piped output (120), with what follows it.
TEST(TableReport, MatchesGoldenOutput) {
  const std::string expected =
      "backend        shape             dtype     median ms TFLOP/s %peak vs best kern cpy occupancy        status\n"
      "naive-inplace  B8 H16 S1024 D64  bf16    1.000 \xC2\xB1" "0.3%    17.2    2%   1.00x    5   0 18.8% regs+smem  ok\n"
      "math           B8 H16 S1024 D64  bf16   3.000 \xC2\xB1" "2.1%*     5.7    1%   3.00x    -   - -                ok\n"
      "naive          B8 H16 S1024 D64  bf16              -       -     -       -    -   - -                failed\n"
      "flash          B8 H16 S1024 D64  bf16              -       -     -       -    -   - -                skipped\n"
      "every case: causal; median ms: GPU time of one forward \xC2\xB1" " the median's 95% interval (* not converged); %peak: of this\n"
      "  GPU's measured 790.0 TFLOP/s bf16 GEMM ceiling (795.0 fp16); kern: kernels per forward; cpy: memcpys per forward;\n"
      "  occupancy: theoretical, of the kernel with the most GPU time, and what limits it\n"
      "\n"
      "not run:\n"
      "  naive B8 H16 S1024 D64 bf16 causal: failed: verification failed\n"
      "  flash B8 H16 S1024 D64 bf16 causal: skipped: not built: not implemented in this version\n"
      "\n"
      "findings:\n"
      "  naive-inplace: CUPTI dropped 3 activity records: the counts above are lower bounds\n"
      "\n"
      "summary:\n"
      "  B8 H16 S1024 D64 bf16 causal\n"
      "    naive-inplace is fastest: 1.000 ms, 17 TFLOP/s (2% of peak), 3.00x faster than math (3.000 ms)\n"
      "    math is 3.00x slower than naive-inplace (no kernel profile to say why)\n"
      "    naive failed: verification failed\n"
      "    flash was skipped: not built: not implemented in this version\n"
;
  EXPECT_EQ(format_table(sample_report()), expected);
}

TEST(TableReport, WideMatchesGoldenOutput) {
  TableOptions wide;
  wide.choice = ColumnChoice::wide;
  wide.summary = false;
  const std::string expected =
      "backend        shape             dtype  causal     median ms TFLOP/s %peak vs best kern cpy host us dominant kernel                   occupancy        achieved  verified     status   reason\n"
      "naive-inplace  B8 H16 S1024 D64  bf16   yes      1.000 \xC2\xB1" "0.3%    17.2    2%   1.00x    5   0    12.5 sm90_xmma_\xE2\x80\xA6" "_warpgroupsize1x1x1    18.8% regs+smem  -         yes 4.0e-03  ok\n"
      "math           B8 H16 S1024 D64  bf16   yes     3.000 \xC2\xB1" "2.1%*     5.7    1%   3.00x    -   -    40.0 -                                 -                -         yes 1.0e-06  ok\n"
      "naive          B8 H16 S1024 D64  bf16   yes                -       -     -       -    -   -       - -                                 -                -         NO 5.0e-01   failed   verification failed\n"
      "flash          B8 H16 S1024 D64  bf16   yes                -       -     -       -    -   -       - -                                 -                -         -            skipped  not built: not implemented in this version\n"
      "median ms: GPU time of one forward \xC2\xB1" " the median's 95% interval (* not converged); %peak: of this GPU's measured 790.0\n"
      "  TFLOP/s bf16 GEMM ceiling (795.0 fp16); kern: kernels per forward; cpy: memcpys per forward; host us: CPU time of one\n"
      "  call (launches only); occupancy: theoretical, of the kernel with the most GPU time, and what limits it\n"
      "\n"
      "findings:\n"
      "  naive-inplace: low occupancy: sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1 at 18.8%\n"
      "      theoretical\n"
      "  naive-inplace: CUPTI dropped 3 activity records: the counts above are lower bounds\n"
;
  EXPECT_EQ(format_table(sample_report(), wide), expected);
}

TEST(TableReport, ListedColumnsInTheirOrder) {
  TableOptions listed;
  listed.choice = ColumnChoice::listed;
  listed.columns = {"status", "backend", "time"};
  listed.summary = false;
  const std::string table = format_table(sample_report(), listed);
  EXPECT_EQ(table.substr(0, table.find("median ms:")),
            "status   backend           median ms\n"
            "ok       naive-inplace   1.000 \xC2\xB1" "0.3%\n"
            "ok       math           3.000 \xC2\xB1" "2.1%*\n"
            "failed   naive                     -\n"
            "skipped  flash                     -\n");
}

TEST(TableReport, SaysWhenTheProfileIsOff) {
  RunReport r = sample_report();
  r.environment.profiler = Profiler{false, "CUPTI could not be loaded (libcupti.so.13: cannot open shared object file)"};
  EXPECT_NE(format_table(r).find("\nprofile off, timing only: CUPTI could not be loaded"), std::string::npos);
}

// Lines of the table itself: the header and one per case.
std::vector<std::string> table_lines(const std::string& text, std::size_t cases) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (lines.size() < cases + 1) {
    const std::size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

TableOptions compact_at(std::size_t width) {
  TableOptions o;
  o.style.width = width;
  return o;
}

TEST(TableReport, CompactFitsTheWidthOneLinePerCase) {
  const RunReport report = test::recorded("h200-default-run1.json");
  for (const std::size_t width : {200u, 120u, 100u, 80u, 60u}) {
    const std::string text = format_table(report, compact_at(width));
    const std::vector<std::string> lines = table_lines(text, report.cases.size());
    for (const std::string& line : lines) EXPECT_LE(display_width(line), width) << width << ": " << line;
    // Every line of the notes, findings and summary wraps at the width too.
    std::size_t start = 0;
    for (std::size_t end = text.find('\n'); end != std::string::npos; start = end + 1, end = text.find('\n', start))
      EXPECT_LE(display_width(text.substr(start, end - start)), width) << width;
  }
}

TEST(TableReport, CompactLeavesColumnsOutInOrderAndSaysSo) {
  const RunReport report = test::recorded("h200-default-run1.json");
  const auto header = [&](std::size_t width) { return table_lines(format_table(report, compact_at(width)), 0)[0]; };
  // Every case is bf16 and causal: at 120 the dtype shows, at 100 it goes into a line.
  EXPECT_EQ(header(120),
            "backend        shape             dtype     median ms TFLOP/s %peak vs best kern cpy occupancy        status");
  EXPECT_EQ(header(100), "backend        shape                median ms TFLOP/s %peak vs best kern cpy occupancy        status");
  EXPECT_EQ(header(80), "backend        shape                median ms TFLOP/s vs best kern status");
  EXPECT_EQ(header(60), "backend        shape                median ms TFLOP/s status");
  const std::string at_100 = format_table(report, compact_at(100));
  EXPECT_NE(at_100.find("every case: bf16, causal;"), std::string::npos);
  EXPECT_EQ(at_100.find("not shown to fit"), std::string::npos);
  const std::string at_80 = format_table(report, compact_at(80));
  EXPECT_NE(at_80.find("not shown to fit 80 columns: %peak, cpy, occupancy\n  (--wide shows every column)"),
            std::string::npos);
}

TEST(TableReport, WideShowsEveryColumnWhateverTheWidth) {
  const RunReport report = test::recorded("h200-default-run1.json");
  TableOptions wide = compact_at(60);
  wide.choice = ColumnChoice::wide;
  EXPECT_EQ(table_lines(format_table(report, wide), 0)[0],
            "backend        shape             dtype  causal     median ms TFLOP/s %peak vs best kern cpy host us "
            "dominant kernel                   occupancy        achieved  verified     status");
}

TEST(TableReport, LeavesOutColumnsNoCaseHasAValueFor) {
  RunReport report = test::recorded("h200-hf-a100.json");  // schema 1: no profile, no ceilings
  const std::string text = format_table(report, compact_at(120));
  EXPECT_EQ(table_lines(text, 0)[0], "backend        shape             dtype  median ms TFLOP/s vs best status");
  EXPECT_NE(text.find("no value in any case: %peak, kern, cpy, occupancy"), std::string::npos);
}

TEST(TableReport, ColourOnlyWhenTheStyleSays) {
  const RunReport report = test::recorded("h200-default-run1.json");
  TableOptions plain = compact_at(100);
  EXPECT_EQ(format_table(report, plain).find('\x1b'), std::string::npos);
  TableOptions coloured = plain;
  coloured.style.colour = true;
  const std::string text = format_table(report, coloured);
  EXPECT_NE(text.find("\x1b[1;32mcudnn\x1b[0m"), std::string::npos);  // the best backend of each problem
  EXPECT_EQ(text.find("\x1b[1;32mflash\x1b[0m"), std::string::npos);
  // The colour codes take no room: the coloured table lines up like the plain one.
  EXPECT_EQ(table_lines(text, report.cases.size()).back().size(),
            table_lines(format_table(report, plain), report.cases.size()).back().size() + 2 * std::string("\x1b[1;32m\x1b[0m").size());
}

TEST(TableReport, QuietLeavesOutTheSummary) {
  const RunReport report = test::recorded("h200-default-run1.json");
  TableOptions quiet = compact_at(100);
  quiet.summary = false;
  EXPECT_NE(format_table(report, compact_at(100)).find("\nsummary:\n"), std::string::npos);
  EXPECT_EQ(format_table(report, quiet).find("\nsummary:\n"), std::string::npos);
  EXPECT_NE(format_table(report, quiet).find("\nfindings:\n"), std::string::npos);
}

TEST(TableReport, FailedAndSkippedCasesInColour) {
  TableOptions coloured;
  coloured.style.colour = true;
  const std::string text = format_table(sample_report(), coloured);
  EXPECT_NE(text.find("\x1b[1;31mfailed\x1b[0m"), std::string::npos);
  EXPECT_NE(text.find("\x1b[33mskipped\x1b[0m"), std::string::npos);
}

TEST(MarkdownReport, KeepsEveryColumn) {
  const std::string md = format_markdown(sample_report());
  EXPECT_NE(md.find("| backend | shape | dtype | causal | median ms \xC2\xB1 spread | TFLOP/s | % of peak | vs best | "
                    "kernels / forward | memcpys / forward | host us / call | dominant kernel | occupancy | achieved occupancy, "
                    "bound | verified (rel "
                    "L2) | status | reason |"),
            std::string::npos);
  EXPECT_NE(md.find("| **naive-inplace** | B8 H16 S1024 D64 | bf16 | yes | **1.000 \xC2\xB1" "0.3%** |"), std::string::npos);
  EXPECT_NE(md.find("- B8 H16 S1024 D64 bf16 causal\n  - naive-inplace is fastest"), std::string::npos);
}

TEST(KernelsReport, MatchesGoldenOutput) {
  const std::string expected =
      "\n"
      "naive-inplace B8 H16 S1024 D64 bf16 causal: 5 kernels, 0 memcpys, 0 memsets per forward "
      "(mean of 2); kernel time 700.0\n"
      "    us of 790.0 us wall (89%); host 12.5 us per call, first call 2500.0 us, setup 1.50 ms\n"
      "  kernel                                                   category         /call   mean us "
      " grid             block        regs  smem KB s+d  cluster launch     occ. limited by        "
      "          torch\n"
      "  sm90_xmma_gemm_bf16bf16_bf16f32_f32_\xE2\x80\xA6"
      "_warpgroupsize1x1x1 tensor-core GEMM     2     150.0  (8,8,128)        (384,1,1)     168    "
      "0.0+134.0  1x1x1   regular   18.8% registers, shared memory     0.0%\n"
      "  masked_fill_kernel<__nv_bfloat16>                        elementwise          2     100.0 "
      " (32768,1,1)      (256,1,1)      32      0.0+0.0  1x1x1   regular  100.0% warps             "
      "         100.0%\n"
      "  softmax_rows_in_registers_kernel<__nv_bfloat16, 4>       softmax              1     200.0 "
      " (32768,1,1)      (256,1,1)      32      0.0+0.0  1x1x1   regular  100.0% warps             "
      "         100.0%\n"
      "\n"
      "occ.: theoretical occupancy (opt-in shared-memory limit, the carveout the kernel ran with); "
      "torch: what PyTorch's\n"
      "  profiler estimates (48 KB default limit, blocks capped by grid / SMs)\n";
  EXPECT_EQ(format_kernels(sample_report()), expected);

  RunReport backward = sample_report();
  for (CaseResult& c : backward.cases) c.problem.pass = AttentionPass::backward;
  EXPECT_NE(format_kernels(backward).find("0 memsets per backward (mean of 2)"), std::string::npos);
}

}  // namespace
}  // namespace sdpa
