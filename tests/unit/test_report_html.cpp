#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "recorded_results.h"
#include "report/report.h"

namespace sdpa {
namespace {

using test::recorded;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlReport, HasTheSectionsChartsAndOneRowPerCase) {
  const RunReport report = recorded("h200-default-run1.json");
  const std::string html = format_html(report);
  for (const char* heading : {"<h2>Environment</h2>", "<h2>Results</h2>", "<h2>Summary</h2>",
                              "<h2>Charts</h2>", "<h2>Cases</h2>"})
    EXPECT_NE(html.find(heading), std::string::npos) << heading;
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 3u);
  for (const char* id : {"id=\"chart-tflops\"", "id=\"chart-kernel-time\"", "id=\"chart-kernels\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  EXPECT_EQ(count(html, "<tr class=\"case"), report.cases.size());
  EXPECT_EQ(count(html, "<details class=\"case\""), report.cases.size());
  EXPECT_EQ(count(html, "<tr class=\"case ok best\""), 3u);  // cudnn at each of the three lengths
  EXPECT_NE(html.find("math is 4.50x slower than naive-inplace"), std::string::npos);
  // One polyline per backend on the throughput chart, three points each.
  EXPECT_EQ(count(html, "<polyline"), 6u);
}

TEST(HtmlReport, FetchesNothing) {
  const std::string html = format_html(recorded("h200-default-run1.json"));
  EXPECT_FALSE(std::regex_search(
      html, std::regex(R"((src|href)\s*=\s*["']?(https?:|//))", std::regex::icase)));
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(HtmlReport, EscapesWhatItQuotes) {
  RunReport report = recorded("h200-hf-a100.json");
  report.cases.at(0).backend = "<script>alert(1)</script>";
  report.environment.command_line = "sdpa-prof --seq '1024' && echo \"done\"";
  const std::string html = format_html(report);
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("--seq &#39;1024&#39; &amp;&amp; echo &quot;done&quot;"), std::string::npos);
}

TEST(HtmlReport, WithoutAProfileSaysTheKernelChartsAreLeftOut) {
  RunReport report = recorded("h200-hf-a100.json");
  for (CaseResult& c : report.cases) c.profile.reset();
  const std::string html = format_html(report);
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 1u);
  EXPECT_NE(html.find("No kernel profile in this run"), std::string::npos);
}

TEST(HtmlReport, KernelTablesCountPerCallOfTheCasesPass) {
  RunReport report = recorded("h200-default-run1.json");
  const std::size_t profiled = count(format_html(report), "<th class=\"num\">/fwd</th>");
  EXPECT_GT(profiled, 0u);
  for (CaseResult& c : report.cases) c.problem.pass = AttentionPass::backward;
  const std::string html = format_html(report);
  EXPECT_EQ(count(html, "<th class=\"num\">/bwd</th>"), profiled);
  EXPECT_EQ(count(html, "/fwd<"), 0u);
}

TEST(HtmlComparison, ShowsEachVerdictAndTheChangeChart) {
  const RunReport base = recorded("h200-default-run1.json");
  RunReport next = base;
  next.cases.at(1).timing->median_ms *= 1.5;  // naive-inplace S1024, well past the threshold
  Comparison c;
  c.threshold = 0.05;
  for (std::size_t i = 0; i < base.cases.size(); ++i) {
    CaseComparison k;
    k.backend = base.cases[i].backend;
    k.problem = base.cases[i].problem;
    k.base_ms = base.cases[i].timing->median_ms;
    k.new_ms = next.cases[i].timing->median_ms;
    k.change = *k.new_ms / *k.base_ms - 1;
    k.verdict = k.change > c.threshold ? Verdict::slower : Verdict::same;
    k.regression = k.verdict == Verdict::slower;
    c.cases.push_back(k);
  }
  const std::string html = format_comparison_html(c, base, next);
  EXPECT_NE(html.find("<h1>sdpa-prof compare: 1 regression in 18 cases</h1>"), std::string::npos);
  EXPECT_EQ(count(html, "<tr class=\"case"), 18u);
  EXPECT_EQ(count(html, "<tr class=\"case regression\""), 1u);
  EXPECT_NE(html.find("id=\"chart-change\""), std::string::npos);
  EXPECT_NE(html.find("regression (slower)"), std::string::npos);
}

}  // namespace
}  // namespace sdpa
