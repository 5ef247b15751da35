#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report.h"

namespace sdpa {
namespace {

RunReport sample_report() {
  RunReport r;
  r.config.seq = {1024};
  r.environment = Environment{"0.1.0", "abc123", "sdpa-prof --seq 1024", "host", "2026-12-02T12:00:00Z", 42, {}};
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

  Problem p;
  p.batch = 8;
  p.heads = 16;
  p.kv_heads = 16;
  p.seq_q = p.seq_kv = 1024;
  p.head_dim = 64;
  p.causal = true;

  CaseResult fast{"naive-inplace", p, CaseStatus::ok, "", 900000000,
                  Verification{4e-3, 0.03, 0, 2e-2, 0.25, true}, TimingStats{3, 20, 1.0, 0.98, 1.2}};
  CaseResult slow{"math", p, CaseStatus::ok, "", 1700000000,
                  Verification{1e-6, 1e-5, 0, 2e-2, 0.25, true}, TimingStats{3, 20, 3.0, 2.9, 3.5}};
  CaseResult failed{"naive", p, CaseStatus::failed, "verification failed", 900000000,
                    Verification{0.5, 3.0, 7, 2e-2, 0.25, false}, std::nullopt};
  CaseResult skipped{"flash", p, CaseStatus::skipped, "not built: not implemented in this version", 0,
                     std::nullopt, std::nullopt};
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

TEST(TableReport, MatchesGoldenOutput) {
  const std::string expected =
      "backend        shape                      dtype causal  median ms           min..max ms   TFLOP/s  vs best  verified      status\n"
      "naive-inplace  B8 H16 S1024 D64           bf16  yes         1.000          0.980..1.200      17.2    1.00x  yes 4.0e-03   ok\n"
      "math           B8 H16 S1024 D64           bf16  yes         3.000          2.900..3.500       5.7    3.00x  yes 1.0e-06   ok\n"
      "naive          B8 H16 S1024 D64           bf16  yes             -                     -         -        -  NO 5.0e-01    failed: verification failed\n"
      "flash          B8 H16 S1024 D64           bf16  yes             -                     -         -        -  -             skipped: not built: not implemented in this version\n";
  EXPECT_EQ(format_table(sample_report()), expected);
}

}  // namespace
}  // namespace sdpa
