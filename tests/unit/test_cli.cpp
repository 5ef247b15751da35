#include <gtest/gtest.h>

#include "axis_values.h"
#include "model/errors.h"

#include <string>
#include <vector>

#include "cli/cli.h"

namespace sdpa {
namespace {

CliParse parse(std::vector<const char*> args) {
  args.insert(args.begin(), "sdpa-prof");
  return parse_cli(static_cast<int>(args.size()), args.data());
}

TEST(Cli, RunIsTheDefaultSubcommandWithTheBuiltInPreset) {
  const CliParse r = parse({});
  ASSERT_FALSE(r.exit_code);
  EXPECT_EQ(r.options.command, Command::run);
  EXPECT_EQ(test::values(r.options.config, "seq"), test::ints({1024, 2048, 4096}));
}

TEST(Cli, FlagsOverrideThePreset) {
  const CliParse r = parse({"--config", SDPA_SOURCE_DIR "/configs/hf-a100.json", "--seq", "2048,4097",
                            "--dtype", "bf16,fp16", "--no-causal", "--backend", "naive,math", "--seed", "7"});
  ASSERT_FALSE(r.exit_code);
  const SweepConfig& c = r.options.config;
  EXPECT_EQ(c.name, "hf-a100");
  EXPECT_EQ(test::values(c, "seq"), test::ints({2048, 4097}));
  EXPECT_EQ(test::values(c, "dtype"), test::texts({"bf16", "fp16"}));
  EXPECT_EQ(test::values(c, "causal"), test::bools({false}));
  EXPECT_EQ(c.backends, (std::vector<std::string>{"naive", "math"}));
  EXPECT_EQ(test::values(c, "batch"), test::ints({8}));
  ASSERT_TRUE(c.seed.has_value());
  EXPECT_EQ(*c.seed, 7u);
}

// --launch is an axis flag; the preset's key is "launch" (configs/launch.json).
TEST(Cli, LaunchIsAFlagAndAPresetKey) {
  CliParse r = parse({"--launch", "graph,eager"});
  ASSERT_FALSE(r.exit_code);
  EXPECT_EQ(test::values(r.options.config, "launch"), test::texts({"graph", "eager"}));
  r = parse({"--config", SDPA_SOURCE_DIR "/configs/launch.json"});
  ASSERT_FALSE(r.exit_code);
  EXPECT_EQ(test::values(r.options.config, "launch"), test::texts({"eager", "graph"}));
  r = parse({"--config", SDPA_SOURCE_DIR "/configs/launch.json", "--launch", "graph"});
  ASSERT_FALSE(r.exit_code);
  EXPECT_EQ(test::values(r.options.config, "launch"), test::texts({"graph"}));
  EXPECT_THROW(parse({"--launch", "lazy"}), InputError);
}

TEST(Cli, ExplicitRunAndListSubcommands) {
  EXPECT_EQ(test::values(parse({"run", "--seq", "64"}).options.config, "seq"), test::ints({64}));
  EXPECT_EQ(parse({"list"}).options.command, Command::list);
}

TEST(Cli, BadDtypeIsAnInputError) { EXPECT_THROW(parse({"--dtype", "fp8"}), InputError); }

TEST(Cli, EmptyListItemsAndFileNamesAreErrors) {
  EXPECT_THROW(parse({"--seq", "1024,,2048"}), InputError);
  EXPECT_THROW(parse({"--seq", "1024,"}), InputError);
  EXPECT_THROW(parse({"--backend", "naive,,flash"}), InputError);
  EXPECT_THROW(parse({"--config", ""}), InputError);
  EXPECT_THROW(parse({"--html", ""}), InputError);
  EXPECT_THROW(parse({"report", "r.json", "--html", ""}), InputError);
  EXPECT_EQ(test::values(parse({"--seq", "64,128", "--seq", "256"}).options.config, "seq"), test::ints({64, 128, 256}));
  EXPECT_EQ(parse({"--backend", "naive,flash"}).options.config.backends, (std::vector<std::string>{"naive", "flash"}));
}

TEST(Cli, UnknownFlagEndsWithExitCode2) {
  const CliParse r = parse({"--frobnicate"});
  ASSERT_TRUE(r.exit_code);
  EXPECT_EQ(*r.exit_code, 2);
}

TEST(Cli, HelpEndsWithExitCode0) {
  const CliParse r = parse({"--help"});
  ASSERT_TRUE(r.exit_code);
  EXPECT_EQ(*r.exit_code, 0);
}

// Every option's value is named as what it is (FILE, LIST, N, S, PCT, MB), never CLI11's TEXT or INT.
TEST(Cli, HelpNamesEachValue) {
  for (const char* sub : {"run", "compare", "report", "trace", "ceilings"}) {
    testing::internal::CaptureStdout();
    const CliParse r = parse({sub, "--help"});
    const std::string help = testing::internal::GetCapturedStdout();
    ASSERT_TRUE(r.exit_code);
    for (const char* generic : {" TEXT", " INT", " UINT", " FLOAT"}) EXPECT_EQ(help.find(generic), std::string::npos) << sub << ":\n" << help;
  }
  testing::internal::CaptureStdout();
  parse({"run", "--help"});
  const std::string run_help = testing::internal::GetCapturedStdout();
  EXPECT_NE(run_help.find("--json FILE"), std::string::npos) << run_help;
  EXPECT_NE(run_help.find("--seq LIST"), std::string::npos) << run_help;
  EXPECT_NE(run_help.find("--max-noise PCT"), std::string::npos) << run_help;
}

}  // namespace
}  // namespace sdpa
