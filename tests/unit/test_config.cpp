#include <gtest/gtest.h>

#include "axis_values.h"
#include "model/errors.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "io/preset.h"

namespace sdpa {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_config(text, "test.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string readme() {
  std::ifstream in(SDPA_SOURCE_DIR "/README.md");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The README's sentence on the default preset, read independently of the preset parser:
// "`default.json` (B=8, H=16, D=64, bf16, causal, S = 1024, 2048, 4096; ...".
TEST(Config, DefaultPresetIsTheOneTheReadmeDescribes) {
  std::smatch m;
  const std::string text = readme();
  ASSERT_TRUE(std::regex_search(text, m,
                                std::regex(R"(`default\.json`\s+\(B=(\d+), H=(\d+), D=(\d+), (\w+), (causal|non-causal), )"
                                           R"(S = ([\d, ]+);)")))
      << "README.md no longer describes default.json in the form this test reads";
  const SweepConfig c = default_config();
  EXPECT_EQ(test::values(c, "batch"), test::ints({static_cast<int64_t>(std::stoll(m[1]))}));
  EXPECT_EQ(test::values(c, "heads"), test::ints({static_cast<int64_t>(std::stoll(m[2]))}));
  EXPECT_EQ(test::values(c, "head_dim"), test::ints({static_cast<int64_t>(std::stoll(m[3]))}));
  EXPECT_EQ(test::values(c, "dtype"), test::texts({m[4].str().c_str()}));
  EXPECT_EQ(test::values(c, "causal"), test::bools({m[5] == "causal"}));
  std::vector<AxisValue> seqs;
  const std::string list = m[6];
  const std::regex number(R"(\d+)");
  for (std::sregex_iterator it(list.begin(), list.end(), number), end; it != end; ++it)
    seqs.emplace_back(static_cast<int64_t>(std::stoll(it->str())));
  EXPECT_EQ(test::values(c, "seq"), seqs);
}

TEST(Config, AcceptsScalarsAndLists) {
  const SweepConfig c = parse_config(R"({"seq": 17, "dtype": ["bf16", "fp16"], "causal": [true, false]})", "t");
  EXPECT_EQ(test::values(c, "seq"), test::ints({17}));
  EXPECT_EQ(test::values(c, "dtype").size(), 2u);
  EXPECT_EQ(test::values(c, "causal").size(), 2u);
}

TEST(Config, SyntaxErrorNamesFileLineAndColumn) {
  const std::string e = error_of("{\n  \"seq\": [1, 2,\n}\n");
  EXPECT_NE(e.find("test.json:3:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("syntax error"), std::string::npos) << e;
}

TEST(Config, UnknownKeyIsAnError) {
  const std::string e = error_of("{\n  \"sequence\": [1]\n}");
  EXPECT_NE(e.find("test.json:2:3: unknown key \"sequence\""), std::string::npos) << e;
}

TEST(Config, WrongValueTypesSayWhatWasExpected) {
  EXPECT_NE(error_of(R"({"seq": [1, "x"]})").find("expected a positive integer"), std::string::npos);
  EXPECT_NE(error_of(R"({"seq": []})").find("a non-empty list"), std::string::npos);
  EXPECT_NE(error_of(R"({"dtype": "fp8"})").find("bf16 or fp16"), std::string::npos);
  EXPECT_NE(error_of(R"({"causal": "yes"})").find("true or false"), std::string::npos);
  EXPECT_NE(error_of(R"({"batch": -1})").find("\"batch\""), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("JSON object"), std::string::npos);
}

TEST(Config, AKeyGivenTwiceIsAnError) {
  EXPECT_NE(error_of(R"({"seq": 1024, "seq": 2048})").find("test.json: the key 'seq' is given twice"), std::string::npos)
      << error_of(R"({"seq": 1024, "seq": 2048})");
}

TEST(Config, AResultsConfigSkipsKeysItDoesNotKnow) {
  const SweepConfig c = parse_config(R"({"seq": 64, "from_a_later_version": {"x": 1}})", "result", axis_table(),
                                     UnknownKeys::skipped);
  EXPECT_EQ(test::values(c, "seq"), test::ints({64}));
  EXPECT_THROW(parse_config(R"({"seq": "x", "later": 1})", "result", axis_table(), UnknownKeys::skipped), InputError);
}

TEST(Config, MissingFileIsAnInputError) {
  EXPECT_THROW(load_config_file("/no/such/config.json"), InputError);
}

}  // namespace
}  // namespace sdpa
