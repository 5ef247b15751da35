// An axis added as one entry of the table appears in the CLI, the preset reader, the preset JSON,
// the expansion into problems and the case identity, with nothing else changed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "io/preset.h"
#include "model/axes.h"
#include "model/case_key.h"
#include "model/errors.h"
#include "model/sweep.h"

namespace sdpa {
namespace {

// A stand-in for a future axis (an attention window): it writes the problem's scale so that the
// test can see it arrive in the problems.
std::vector<AxisSpec> table_with_fake_axis() {
  std::vector<AxisSpec> axes = axis_table();
  AxisSpec window;
  window.name = "window";
  window.flag = "--window";
  window.help = "attention window (a test axis)";
  window.type = AxisType::positive_integer;
  window.defaults = {int64_t{128}};
  window.nesting = 9;
  window.apply = [](Problem& p, const AxisValue& v) { p.scale = static_cast<double>(std::get<int64_t>(v)); };
  window.read = [](const Problem& p) { return AxisValue{static_cast<int64_t>(p.scale)}; };
  axes.push_back(window);
  return axes;
}

CliParse parse(const std::vector<AxisSpec>& axes, std::vector<const char*> args) {
  args.insert(args.begin(), "sdpa-prof");
  return parse_cli(static_cast<int>(args.size()), args.data(), axes);
}

TEST(FakeAxis, IsAFlagOfTheCli) {
  const auto axes = table_with_fake_axis();
  const CliParse r = parse(axes, {"--window", "256,512", "--seq", "64"});
  ASSERT_FALSE(r.exit_code);
  const std::vector<Problem> problems = expand_problems(r.options.config, axes);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].scale, 256);
  EXPECT_EQ(problems[1].scale, 512);
  EXPECT_THROW(parse(axes, {"--window", "0"}), InputError);
  // The real table has no such flag.
  const CliParse plain = parse(axis_table(), {"--window", "256"});
  ASSERT_TRUE(plain.exit_code);
  EXPECT_EQ(*plain.exit_code, 2);
}

TEST(FakeAxis, IsAKeyOfThePresetAndItsJson) {
  const auto axes = table_with_fake_axis();
  const SweepConfig c = parse_config(R"({"window": [64, 32], "seq": 17})", "t.json", axes);
  const nlohmann::json j = config_to_json(c, axes);
  EXPECT_EQ(j.at("window"), nlohmann::json::parse("[64, 32]"));
  EXPECT_EQ(config_to_json(parse_config(j.dump(), "round trip", axes), axes), j);
  EXPECT_THROW(parse_config(R"({"window": "wide"})", "t.json", axes), InputError);
  EXPECT_THROW(parse_config(R"({"window": 64})", "t.json"), InputError);  // unknown to the real table
  // Its default applies when nothing names it.
  EXPECT_EQ(config_to_json(SweepConfig{}, axes).at("window"), nlohmann::json::parse("[128]"));
}

TEST(FakeAxis, IsPartOfTheCaseIdentity) {
  const auto axes = table_with_fake_axis();
  Problem a;
  a.scale = 64;
  Problem b = a;
  b.scale = 32;
  EXPECT_NE(case_key("flash", a, axes), case_key("flash", b, axes));
  EXPECT_NE(case_key("flash", a, axes).problem.find("window=64"), std::string::npos);
}

TEST(CaseKey, NamesBackendAndEveryIdentityAxis) {
  Problem p;
  p.batch = 8;
  p.heads = 16;
  p.kv_heads = 16;
  p.seq_q = p.seq_kv = 1024;
  p.head_dim = 64;
  p.causal = true;
  EXPECT_EQ(case_key("flash", p).text(),
            "flash batch=8 heads=16 kv_heads=16 seq=1024 seq_kv=1024 head_dim=64 dtype=bf16 causal=true scale=0.125 pass=fwd launch=eager");
  EXPECT_EQ(case_key("flash", p), case_key("flash", p));
  EXPECT_NE(case_key("flash", p), case_key("cudnn", p));
  EXPECT_EQ(problem_key(p).backend, "");
}

}  // namespace
}  // namespace sdpa
