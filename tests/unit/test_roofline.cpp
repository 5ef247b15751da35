// Which ceiling a case is held against, and the decode finding, on synthetic results: a decode
// forward is memory-bound and measured against the HBM read ceiling; a prefill one against the
// GEMM ceiling; results without a read ceiling stay as they were.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "io/ceilings_file.h"
#include "model/errors.h"
#include "model/roofline.h"
#include "report/finding_groups.h"
#include "report/report.h"
#include "report/table_columns.h"

namespace sdpa {
namespace {

constexpr int kSms = 132;

Ceilings h200_like(double read_tb_per_s) {
  Ceilings c;
  c.device_name = "a GPU";
  c.device_uuid = "GPU-1";
  c.bf16_gemm_tflops = 800;
  c.fp16_gemm_tflops = 760;
  c.copy_tb_per_s = 4.2;
  c.read_tb_per_s = read_tb_per_s;
  return c;
}

Problem decode_problem() {
  Problem p;
  p.batch = 16;
  p.heads = 32;
  p.kv_heads = 8;
  p.seq_q = 1;
  p.seq_kv = 32768;
  p.head_dim = 128;
  return p;
}

Problem prefill_problem() {
  Problem p;
  p.batch = 8;
  p.heads = 16;
  p.kv_heads = 16;
  p.seq_q = p.seq_kv = 4096;
  p.head_dim = 128;
  p.causal = true;
  return p;
}

// A case that reads its minimum bytes at `tb_per_s`, its one fused kernel on `ctas` CTAs; with
// `dram_share` > 0 the counters saw that many times the minimum bytes.
CaseResult timed_case(const Problem& p, double tb_per_s, int ctas, double dram_share = 0) {
  CaseResult c;
  c.backend = "flash3";
  c.problem = p;
  c.status = CaseStatus::ok;
  TimingStats t;
  t.median_ms = t.min_ms = t.max_ms = p.min_bytes() / (tb_per_s * 1e12) * 1e3;
  t.samples = 10;
  c.timing = t;
  CaseProfile profile;
  KernelProfile k;
  k.name = k.full_name = "flash3_fwd_kernel";
  k.category = KernelCategory::fused_attention;
  k.per_forward = 1;
  k.mean_us = t.median_ms * 1e3;
  k.grid = Dim3{ctas, 1, 1};
  if (dram_share > 0) {
    k.counters["dram__bytes_read.sum"] = dram_share * p.min_bytes();
    k.counters["dram__bytes_write.sum"] = 0;
  }
  profile.kernels.push_back(k);
  c.profile = profile;
  return c;
}

TEST(PeakShare, DecodeIsHeldAgainstTheReadCeilingAndPrefillAgainstCompute) {
  const Ceilings ceilings = h200_like(4.0);
  const std::optional<PeakShare> decode = peak_share(timed_case(decode_problem(), 2.0, kSms), ceilings);
  ASSERT_TRUE(decode.has_value());
  EXPECT_EQ(decode->ceiling, Ceiling::read_bandwidth);
  EXPECT_DOUBLE_EQ(decode->ridge, 200);  // 800 TFLOP/s over 4 TB/s
  EXPECT_LT(decode->intensity, 10);
  EXPECT_NEAR(decode->percent, 50, 1e-9);

  const CaseResult prefill = timed_case(prefill_problem(), 0.5, kSms);
  const std::optional<PeakShare> compute = peak_share(prefill, ceilings);
  ASSERT_TRUE(compute.has_value());
  EXPECT_EQ(compute->ceiling, Ceiling::compute);
  EXPECT_GT(compute->intensity, compute->ridge);
  EXPECT_NEAR(compute->percent, 100 * prefill.tflops() / 800, 1e-9);
}

TEST(PeakShare, WithoutAReadCeilingEveryCaseIsHeldAgainstCompute) {
  const CaseResult decode = timed_case(decode_problem(), 2.0, kSms);
  const std::optional<PeakShare> share = peak_share(decode, h200_like(0));
  ASSERT_TRUE(share.has_value());
  EXPECT_EQ(share->ceiling, Ceiling::compute);
  EXPECT_EQ(share->ridge, 0);
  EXPECT_NEAR(share->percent, 100 * decode.tflops() / 800, 1e-9);
  CaseResult untimed = decode;
  untimed.timing.reset();
  EXPECT_FALSE(peak_share(untimed, h200_like(4.0)));
}

TEST(ReadCeilingFinding, NamesOnlyTheReasonsItsDataShows) {
  const Ceilings ceilings = h200_like(4.0);
  // Far from the ceiling, on 64 CTAs, Sq 1 with 4 query heads per K/V head, 1.5x the bytes.
  const std::vector<Finding> all = bandwidth_findings(timed_case(decode_problem(), 1.2, 64, 1.5), ceilings, kSms);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].rule, "far-from-read-ceiling");
  const std::string& text = all[0].text;
  EXPECT_EQ(text.rfind("far from the HBM read ceiling: 1.20 TB/s, 30% of the 4.00 TB/s measured", 0), 0u) << text;
  EXPECT_NE(text.find("64 CTAs for 132 SMs"), std::string::npos) << text;
  EXPECT_NE(text.find("Sq 1: a query tile of one head's rows fills at most 1 of the 16 rows"), std::string::npos);
  EXPECT_NE(text.find("(4 with the 4 query heads of a K/V head packed)"), std::string::npos) << text;
  EXPECT_NE(text.find("(1.50x)"), std::string::npos) << text;

  // A full grid, 16 query rows, the minimum bytes: far, with no reason to give.
  Problem rows16 = decode_problem();
  rows16.seq_q = 16;
  const std::vector<Finding> bare = bandwidth_findings(timed_case(rows16, 1.2, 4 * kSms, 1.02), ceilings, kSms);
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_EQ(bare[0].text.find(';'), std::string::npos) << bare[0].text;
  // Unknown SM count: no CTA reason.
  EXPECT_EQ(bandwidth_findings(timed_case(decode_problem(), 1.2, 64), ceilings, 0)[0].text.find("CTAs"),
            std::string::npos);
}

TEST(ReadCeilingFinding, IsSilentNearTheCeilingForComputeBoundCasesAndWithoutTheCeiling) {
  EXPECT_TRUE(bandwidth_findings(timed_case(decode_problem(), 3.6, 64), h200_like(4.0), kSms).empty());
  EXPECT_TRUE(bandwidth_findings(timed_case(prefill_problem(), 0.01, 64), h200_like(4.0), kSms).empty());
  EXPECT_TRUE(bandwidth_findings(timed_case(decode_problem(), 0.4, 64), h200_like(0), kSms).empty());
}

RunReport report_of(const std::vector<CaseResult>& cases, const Ceilings& ceilings) {
  RunReport r;
  r.environment.ceilings = ceilings;
  DeviceInfo device;
  device.name = "a GPU";
  device.sm_count = kSms;
  device.total_memory = std::size_t{80} << 30;
  r.environment.device = device;
  r.cases = cases;
  return r;
}

TEST(PeakColumn, NamesTheCeilingThatApplies) {
  const RunReport r = report_of({timed_case(decode_problem(), 2.0, kSms), timed_case(prefill_problem(), 0.5, kSms)},
                                h200_like(4.0));
  const TableContext t(r);
  const TableColumn& peak = *find_table_column("peak");
  EXPECT_EQ(peak.cell(r.cases[0], t), "50% mem");
  EXPECT_NE(peak.cell(r.cases[1], t).find(" cmp"), std::string::npos);
  EXPECT_NE(peak.legend(t).find("4.00 TB/s HBM read ceiling"), std::string::npos) << peak.legend(t);
  EXPECT_EQ(t.peak_text(r.cases[0]), "50% of HBM read bandwidth");
  // Without a read ceiling, the column is what it was.
  const RunReport old = report_of({timed_case(decode_problem(), 2.0, kSms)}, h200_like(0));
  const TableContext before(old);
  EXPECT_EQ(peak.cell(old.cases[0], before).find(' '), std::string::npos);
  EXPECT_EQ(peak.legend(before).find("HBM"), std::string::npos);
}

TEST(PeakColumn, JsonHoldsTheCeilingAndTheFindingAndReadsBack) {
  const RunReport r = report_of({timed_case(decode_problem(), 1.2, 64)}, h200_like(4.0));
  const nlohmann::json j = report_to_json(r);
  EXPECT_EQ(j.at("environment").at("ceilings").at("read_tb_per_s"), 4.0);
  const nlohmann::json& roof = j.at("cases").at(0).at("roofline");
  EXPECT_EQ(roof.at("ceiling"), "read_bandwidth");
  EXPECT_DOUBLE_EQ(roof.at("ridge_point").get<double>(), 200);
  EXPECT_NEAR(roof.at("percent_of_read_bandwidth").get<double>(), 30, 1e-9);
  EXPECT_EQ(j.at("cases").at(0).at("findings").back().at("rule"), "far-from-read-ceiling");
  EXPECT_EQ(report_from_json(j).environment.ceilings->read_tb_per_s, 4.0);
  // Ceilings from before the read ceiling read as unknown; a bad one is refused by name.
  nlohmann::json older = ceilings_to_json(h200_like(4.0));
  older.erase("read_tb_per_s");
  EXPECT_EQ(ceilings_from_json(JsonFields(older, "old")).read_tb_per_s, 0);
  older["read_tb_per_s"] = -1;
  EXPECT_THROW(ceilings_from_json(JsonFields(older, "bad")), InputError);
}

TEST(PeakColumn, TheSummarySaysWhichCeiling) {
  const RunReport r = report_of({timed_case(decode_problem(), 2.0, kSms)}, h200_like(4.0));
  EXPECT_NE(format_summary(r).find("2.00 TB/s (50% of HBM read bandwidth)"), std::string::npos) << format_summary(r);
}

TEST(ReadCeilingFinding, IsSaidUnderTheTableWithThePageSizeWhereItVaries) {
  Problem paged = decode_problem();
  paged.page_size = 16;
  const RunReport r =
      report_of({timed_case(decode_problem(), 1.2, 64), timed_case(paged, 1.0, 64)}, h200_like(4.0));
  const std::string text = format_findings(r, TextStyle{}, false);
  EXPECT_NE(text.find("far from the HBM read ceiling"), std::string::npos) << text;
  EXPECT_NE(text.find("contiguous"), std::string::npos) << text;
  EXPECT_NE(text.find("page16"), std::string::npos) << text;
}

TEST(RooflineChart, TheHtmlReportDrawsItUnderBothCeilings) {
  const RunReport r = report_of({timed_case(decode_problem(), 2.0, kSms), timed_case(prefill_problem(), 0.5, kSms)},
                                h200_like(4.0));
  const std::string html = format_html(r);
  const std::size_t chart = html.find("id=\"chart-roofline\"");
  ASSERT_NE(chart, std::string::npos);
  EXPECT_NE(html.find("HBM read 4.00 TB/s, ridge 200 FLOP/B", chart), std::string::npos);
  EXPECT_NE(html.find("GEMM ceiling 800 TFLOP/s", chart), std::string::npos);
  const std::string svg = html.substr(chart, html.find("</svg>", chart) - chart);
  std::size_t dots = 0;
  for (std::size_t at = svg.find("<title>flash3: "); at != std::string::npos; at = svg.find("<title>flash3: ", at + 1))
    ++dots;
  EXPECT_EQ(dots, 2u);  // one per timed case
  // Results from before the read ceiling draw none.
  EXPECT_EQ(format_html(report_of({timed_case(decode_problem(), 2.0, kSms)}, h200_like(0))).find("chart-roofline"),
            std::string::npos);
}

}  // namespace
}  // namespace sdpa
