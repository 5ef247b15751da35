#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config.h"

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

TEST(Config, DefaultPresetIsTheDocumentedOne) {
  const SweepConfig c = default_config();
  EXPECT_EQ(c.batch, std::vector<int64_t>{8});
  EXPECT_EQ(c.heads, std::vector<int64_t>{16});
  EXPECT_EQ(c.head_dim, std::vector<int64_t>{64});
  EXPECT_EQ(c.seq, (std::vector<int64_t>{1024, 2048, 4096}));
  EXPECT_EQ(c.dtypes, std::vector<DType>{DType::bf16});
  EXPECT_EQ(c.causal, std::vector<bool>{true});
}

TEST(Config, BuiltInDefaultMatchesTheFile) {
  const SweepConfig file = load_config_file(SDPA_SOURCE_DIR "/configs/default.json");
  EXPECT_EQ(config_to_json(file), config_to_json(default_config()));
}

TEST(Config, AcceptsScalarsAndLists) {
  const SweepConfig c = parse_config(R"({"seq": 17, "dtype": ["bf16", "fp16"], "causal": [true, false]})", "t");
  EXPECT_EQ(c.seq, std::vector<int64_t>{17});
  EXPECT_EQ(c.dtypes.size(), 2u);
  EXPECT_EQ(c.causal.size(), 2u);
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
  EXPECT_NE(error_of(R"({"dtype": "fp8"})").find("\"bf16\", \"fp16\""), std::string::npos);
  EXPECT_NE(error_of(R"({"causal": "yes"})").find("true, false"), std::string::npos);
  EXPECT_NE(error_of(R"({"batch": -1})").find("\"batch\""), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("JSON object"), std::string::npos);
}

TEST(Config, MissingFileIsAnInputError) {
  EXPECT_THROW(load_config_file("/no/such/config.json"), InputError);
}

}  // namespace
}  // namespace sdpa
