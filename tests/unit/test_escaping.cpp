// Strings from files and other processes on their way to a terminal, a Markdown comment and a
// spreadsheet: model/printable_text.h, report/cell_escape.h.
#include <gtest/gtest.h>

#include <string>

#include "model/printable_text.h"
#include "report/cell_escape.h"

namespace sdpa {
namespace {

TEST(Escaping, ControlCharactersAreWrittenAsEscapes) {
  EXPECT_EQ(printable_text("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
  EXPECT_EQ(printable_text("a\rb\nc\td"), "a\\rb\\nc\\td");
  EXPECT_EQ(printable_text(std::string("nul\0end", 7)), "nul\\x00end");
  EXPECT_EQ(printable_text("\xc2\x9b" "31m"), "\\u009b31m");  // C1 CSI in UTF-8
  EXPECT_EQ(printable_text("bad \xff byte"), "bad \\xff byte");
  EXPECT_EQ(printable_text("naïve · H200 … ✓"), "naïve · H200 … ✓");  // UTF-8 stays
  EXPECT_TRUE(is_printable_text("torch:naive-inplace"));
  EXPECT_FALSE(is_printable_text("a\x7f"));
}

TEST(Escaping, MarkdownCellsKeepTheirRow) {
  EXPECT_EQ(markdown_cell("a|b"), "a\\|b");
  EXPECT_EQ(markdown_cell("x\n### 0 regressions"), "x\\n### 0 regressions");
  EXPECT_EQ(markdown_cell("<img src=x onerror=alert(1)> & co"), "&lt;img src=x onerror=alert(1)&gt; &amp; co");
}

TEST(Escaping, CsvFormulasAreNeutralisedAndNumbersKept) {
  EXPECT_EQ(csv_field("=HYPERLINK(\"http://x\")"), "\"'=HYPERLINK(\"\"http://x\"\")\"");
  EXPECT_EQ(csv_field("+cmd"), "\"'+cmd\"");
  EXPECT_EQ(csv_field("-2+3+cmd|' /C calc'!A0"), "\"'-2+3+cmd|' /C calc'!A0\"");
  EXPECT_EQ(csv_field("@SUM(1)"), "\"'@SUM(1)\"");
  EXPECT_EQ(csv_field("\tx"), "\"'\tx\"");
  EXPECT_EQ(csv_field("-1.5"), "-1.5");
  EXPECT_EQ(csv_field("-3e-05"), "-3e-05");
  EXPECT_EQ(csv_field("a\rb"), "\"a\rb\"");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("naive"), "naive");
}

}  // namespace
}  // namespace sdpa
