// The page_size axis: absent unless given, so contiguous cases keep the identity, JSON and range
// names they had before the axis; present, it is part of all of them. And the decode preset.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "cli/cli.h"
#include "hopper_device.h"
#include "io/preset.h"
#include "model/case_key.h"
#include "model/errors.h"
#include "model/range_name.h"
#include "model/sweep.h"
#include "report/report.h"

namespace sdpa {
namespace {

Problem decode_shape(int64_t page_size) {
  Problem p;
  p.batch = 16;
  p.heads = 32;
  p.kv_heads = 8;
  p.seq_q = 1;
  p.seq_kv = 32768;
  p.head_dim = 128;
  p.causal = false;
  p.page_size = page_size;
  return p;
}

std::vector<Problem> problems_of(std::vector<const char*> args) {
  args.insert(args.begin(), "sdpa-prof");
  const CliParse r = parse_cli(static_cast<int>(args.size()), args.data());
  if (r.exit_code) throw InputError("the command line was refused");
  return expand_problems(r.options.config);
}

TEST(PageSizeAxis, IsAbsentUnlessGiven) {
  const std::vector<Problem> plain = problems_of({"--seq", "64"});
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_FALSE(plain[0].paged());
  const std::vector<Problem> paged = problems_of({"--seq", "64", "--page-size", "16,64"});
  ASSERT_EQ(paged.size(), 2u);
  EXPECT_EQ(paged[0].page_size, 16);
  EXPECT_EQ(paged[1].page_size, 64);
  EXPECT_THROW(problems_of({"--page-size", "0"}), InputError);
  EXPECT_THROW(parse_config(R"({"page_size": -16})", "t.json"), InputError);
}

TEST(PageSizeAxis, ContiguousCasesKeepTheirKey) {
  const CaseKey contiguous = case_key("flash3", decode_shape(0));
  EXPECT_EQ(contiguous.problem.find("page_size"), std::string::npos);
  EXPECT_EQ(contiguous.text(),
            "flash3 batch=16 heads=32 kv_heads=8 seq=1 seq_kv=32768 head_dim=128 dtype=bf16 causal=false scale=" +
                axis_value_text(AxisValue{decode_shape(0).softmax_scale()}) + " pass=fwd launch=eager");
  const CaseKey paged = case_key("flash3", decode_shape(16));
  EXPECT_EQ(paged.text(), "flash3 batch=16 heads=32 kv_heads=8 seq=1 seq_kv=32768 head_dim=128 dtype=bf16 causal=false scale=" +
                              axis_value_text(AxisValue{decode_shape(0).softmax_scale()}) + " page_size=16 pass=fwd launch=eager");
  EXPECT_NE(case_key("flash3", decode_shape(64)), paged);
}

TEST(PageSizeAxis, RangeNamesRoundTrip) {
  EXPECT_EQ(range_prefix("flash3", decode_shape(0)), "sdpa-prof/flash3/B16_H32_Hkv8_S1_Skv32768_D128_bf16");
  const std::string paged = forward_range_name("flash3", decode_shape(64), 1);
  EXPECT_EQ(paged, "sdpa-prof/flash3/B16_H32_Hkv8_S1_Skv32768_D128_bf16_page64/fwd1");
  const std::optional<ForwardRange> back = parse_forward_range(paged);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->problem.page_size, 64);
  EXPECT_FALSE(parse_forward_range("sdpa-prof/flash3/B16_H32_Hkv8_S1_Skv32768_D128_bf16_page0/fwd1"));
  EXPECT_FALSE(parse_forward_range("sdpa-prof/flash3/B16_H32_Hkv8_S1_Skv32768_D128_bf16_page016/fwd1"));
}

TEST(PageSizeAxis, ResultJsonAndCsvHoldItOnlyWhenSet) {
  RunReport report;
  for (const int64_t page_size : {0, 16}) {
    CaseResult c;
    c.backend = "flash";
    c.problem = decode_shape(page_size);
    c.status = CaseStatus::skipped;
    c.reason = paged_kv_unsupported("flash");
    report.cases.push_back(c);
  }
  const nlohmann::json j = report_to_json(report);
  EXPECT_FALSE(j.at("cases").at(0).at("problem").contains("page_size"));
  EXPECT_EQ(j.at("cases").at(1).at("problem").at("page_size"), 16);
  const RunReport back = report_from_json(j);
  EXPECT_EQ(back.cases.at(0).problem.page_size, 0);
  EXPECT_EQ(back.cases.at(1).problem.page_size, 16);
  nlohmann::json bad = j;
  bad["cases"][1]["problem"]["page_size"] = 0;
  EXPECT_THROW(report_from_json(bad), InputError);

  const std::string csv = format_csv(report);
  EXPECT_NE(csv.find(",scale,page_size,"), std::string::npos);
  const std::string scale = axis_value_text(AxisValue{decode_shape(0).softmax_scale()});
  EXPECT_NE(csv.find("false," + scale + ",,fwd,eager,skipped"), std::string::npos) << csv;
  EXPECT_NE(csv.find("false," + scale + ",16,fwd,eager,skipped"), std::string::npos) << csv;
}

TEST(PageSizeAxis, ShapeLabelAndPoolSize) {
  EXPECT_EQ(decode_shape(16).shape_label(), "B16 H32 Hkv8 S1 Skv32768 D128 page16");
  Problem odd = decode_shape(64);
  odd.seq_kv = 4097;  // 64 whole pages and one holding a single key
  EXPECT_EQ(odd.pages_per_sequence(), 65);
  EXPECT_EQ(odd.kv_pool_elements(), 16 * 65 * 64 * 8 * 128);
  EXPECT_EQ(decode_shape(0).pages_per_sequence(), 0);
  Problem huge = decode_shape(int64_t{1} << 40);  // one page far beyond any GPU, and no overflow
  EXPECT_NE(problem_error(huge).find("page pool"), std::string::npos);
  huge.page_size = INT64_MAX;
  EXPECT_NE(problem_error(huge).find("page pool"), std::string::npos);
}

TEST(PageSizeAxis, EveryBackendThatCannotReadPagesSaysSo) {
  const DeviceInfo h200 = test::hopper_device();
  for (const BackendEntry& e : backend_registry()) {
    const std::optional<std::string> why = cannot_run(e, decode_shape(16), h200);
    if (!e.built()) continue;
    if (e.reads_paged_kv) {
      EXPECT_TRUE(!why || why->find("paged") == std::string::npos) << e.name;
    } else {
      ASSERT_TRUE(why.has_value()) << e.name;
      EXPECT_EQ(*why, "paged K/V (--page-size) is not supported by " + std::string(e.name));
    }
    const std::optional<std::string> contiguous = cannot_run(e, decode_shape(0), h200);
    EXPECT_TRUE(!contiguous || contiguous->find("paged") == std::string::npos) << e.name;
  }
}

TEST(DecodePreset, IsTheIssuesSweep) {
  const SweepConfig c = load_config_file(SDPA_SOURCE_DIR "/configs/decode.json");
  const std::vector<Problem> problems = expand_problems(c);
  // B {1,16,64} x H {8,32,64} over Hkv 8 x Sq {1,4} x Skv {4096,32768,131072} x D {64,128}
  EXPECT_EQ(problems.size(), 3u * 3u * 2u * 3u * 2u);
  bool grouped = false;
  bool ungrouped = false;
  for (const Problem& p : problems) {
    EXPECT_EQ(p.kv_heads, 8);
    EXPECT_FALSE(p.causal);
    EXPECT_EQ(p.dtype, DType::bf16);
    EXPECT_FALSE(p.paged());
    EXPECT_LE(p.seq_q, 4);
    grouped |= p.heads == 64;
    ungrouped |= p.heads == p.kv_heads;
  }
  EXPECT_TRUE(grouped && ungrouped);
}

}  // namespace
}  // namespace sdpa
