#include <gtest/gtest.h>

#include "cli/terminal.h"

namespace sdpa {
namespace {

// A 100-column xterm, with what the environment says besides.
TerminalFacts terminal(std::optional<std::string> columns_env = std::nullopt,
                       std::optional<std::string> no_color_env = std::nullopt,
                       std::string term = "xterm-256color") {
  return TerminalFacts{true, 100, std::move(columns_env), std::move(no_color_env), std::move(term)};
}

TerminalFacts piped(std::optional<std::string> columns_env = std::nullopt) {
  return TerminalFacts{false, 0, std::move(columns_env), std::nullopt, std::nullopt};
}

TEST(Terminal, WidthIsColumnsThenTheTerminalThen120WhenPiped) {
  EXPECT_EQ(text_style_for(terminal()).width, 100u);
  EXPECT_EQ(text_style_for(terminal(std::string("132"))).width, 132u);
  EXPECT_EQ(text_style_for(piped()).width, 120u);
  EXPECT_EQ(text_style_for(piped(std::string("90"))).width, 90u);
  TerminalFacts unknown_size = terminal();
  unknown_size.terminal_columns = 0;
  EXPECT_EQ(text_style_for(unknown_size).width, 80u);
}

TEST(Terminal, ColumnsThatIsNotAPositiveNumberIsIgnored) {
  for (const std::string bad : {"", "abc", "0", "-5", "100x", " 80", "99999999999999999999"})
    EXPECT_EQ(text_style_for(terminal(bad)).width, 100u) << "COLUMNS='" << bad << "'";
}

TEST(Terminal, ColourOnlyOnATerminalWithoutNoColor) {
  EXPECT_TRUE(text_style_for(terminal()).colour);
  EXPECT_FALSE(text_style_for(piped()).colour);
  EXPECT_FALSE(text_style_for(terminal(std::nullopt, std::string("1"))).colour);
  // no-color.org: NO_COLOR set to the empty string does not count.
  EXPECT_TRUE(text_style_for(terminal(std::nullopt, std::string())).colour);
  EXPECT_FALSE(text_style_for(terminal(std::nullopt, std::nullopt, "dumb")).colour);
}

}  // namespace
}  // namespace sdpa
