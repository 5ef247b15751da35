#include <gtest/gtest.h>

#include "axis_values.h"
#include "model/errors.h"

#include <nlohmann/json.hpp>

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

TEST(Config, DefaultPresetIsTheDocumentedOne) {
  const SweepConfig c = default_config();
  EXPECT_EQ(test::values(c, "batch"), test::ints({8}));
  EXPECT_EQ(test::values(c, "heads"), test::ints({16}));
  EXPECT_EQ(test::values(c, "head_dim"), test::ints({64}));
  EXPECT_EQ(test::values(c, "seq"), test::ints({1024, 2048, 4096}));
  EXPECT_EQ(test::values(c, "dtype"), test::texts({"bf16"}));
  EXPECT_EQ(test::values(c, "causal"), test::bools({true}));
}

TEST(Config, BuiltInDefaultMatchesTheFile) {
  const SweepConfig file = load_config_file(SDPA_SOURCE_DIR "/configs/default.json");
  EXPECT_EQ(config_to_json(file), config_to_json(default_config()));
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
