#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "recorded_results.h"
#include "report/summary.h"

namespace sdpa {
namespace {

std::vector<std::string> texts(const ProblemSummary& p) {
  std::vector<std::string> out;
  for (const SummaryLine& line : p.lines) out.push_back(line.text);
  return out;
}

// The study's shape (B8 H16 S1024 D64 bf16 causal) on the H200: every sentence from the results.
TEST(Summary, TellsTheStoryOfTheRecordedH200Run) {
  const std::vector<ProblemSummary> summary = summarize(test::recorded("h200-default-run1.json"));
  ASSERT_EQ(summary.size(), 3u);
  EXPECT_EQ(summary[0].problem, "B8 H16 S1024 D64 bf16 causal");
  EXPECT_EQ(texts(summary[0]),
            (std::vector<std::string>{
                "cudnn is fastest: 0.065 ms, 264 TFLOP/s (33% of peak), 1.41x faster than flash (0.092 ms)",
                "flash is 1.41x slower than cudnn: 12.5% occupancy (limited by registers, shared memory) against "
                "18.8%, 23% of peak against 33%",
                "efficient is 1.51x slower than cudnn: both at 18.8% occupancy, 22% of peak against 33%",
                "naive-inplace is 9.24x slower than cudnn: 5 kernels per forward against 1, the 256 MiB score "
                "matrix written to and read from memory between them",
                "naive is 1.21x slower than naive-inplace: hidden device-to-device copy per forward",
                "math is 4.50x slower than naive-inplace: 20 kernels per forward against 5, fp32 SIMT GEMMs, "
                "tensor cores idle, causal mask rebuilt on every call, safe softmax",
            }));
  EXPECT_EQ(summary[0].lines[0].kind, SummaryKind::fastest);
  EXPECT_EQ(summary[0].lines[5].backend, "math");
  EXPECT_EQ(summary[2].lines[5].text.substr(0, 42), "math is 4.15x slower than naive-inplace: 2");
}

// Two fused kernels are compared by the same measured figures on every shape: the tensor pipes'
// busy share is said as measured (flash's 43% against flash3's 52%), never as "mostly idle".
TEST(Summary, FusedKernelsByTheSameFiguresOnEveryShape) {
  const std::vector<ProblemSummary> summary = summarize(test::recorded("h200-hopper-preset-stage9b.json"));
  ASSERT_EQ(summary.size(), 4u);
  for (const ProblemSummary& p : summary) {
    const auto flash = std::find_if(p.lines.begin(), p.lines.end(), [](const SummaryLine& l) { return l.backend == "flash"; });
    ASSERT_NE(flash, p.lines.end());
    EXPECT_NE(flash->text.find(" slower than flash3: 12.5% occupancy (limited by registers, shared memory) against "),
              std::string::npos)
        << flash->text;
    EXPECT_NE(flash->text.find(", tensor pipes busy "), std::string::npos) << flash->text;
    EXPECT_EQ(flash->text.find("idle"), std::string::npos) << flash->text;
  }
  EXPECT_NE(texts(summary[0])[2].find("tensor pipes busy 43% of the time against 52%"), std::string::npos)
      << texts(summary[0])[2];
}

TEST(Summary, WithoutAProfileSaysSoAndComparesWithTheFastest) {
  const std::vector<ProblemSummary> summary = summarize(test::recorded("h200-hf-a100.json"));
  ASSERT_EQ(summary.size(), 1u);
  const std::vector<std::string> lines = texts(summary[0]);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].substr(0, 18), "flash is fastest: ");
  EXPECT_NE(lines[0].find("faster than efficient"), std::string::npos);
  EXPECT_EQ(lines[4].substr(0, 8), "math is ");
  EXPECT_NE(lines[4].find(" slower than flash (no kernel profile to say why)"), std::string::npos);
}

TEST(Summary, CallsCasesInsideTheNoiseEven) {
  RunReport report = test::recorded("h200-default-run1.json");
  report.cases.resize(6);  // S1024
  report.cases[4].timing->median_ms =
      report.cases[5].timing->median_ms * 1.001;  // flash within cudnn's noise
  report.cases[4].timing->relative_spread = 0.002;
  report.cases[5].timing->relative_spread = 0.002;
  const std::vector<std::string> lines = texts(summarize(report)[0]);
  EXPECT_NE(lines[0].find("; flash is as fast within the noise"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].substr(0, 45), "flash is as fast as cudnn within the noise (1");
}

TEST(Summary, NamesFailedAndSkippedCasesLast) {
  RunReport report = test::recorded("h200-default-run1.json");
  report.cases.resize(6);
  report.cases[0].status = CaseStatus::failed;
  report.cases[0].reason = "verification failed: rel L2 5.0e-01";
  report.cases[0].timing.reset();
  report.cases[3].status = CaseStatus::skipped;
  report.cases[3].reason = "head dim 256 not supported";
  report.cases[3].timing.reset();
  const std::vector<SummaryLine> lines = summarize(report)[0].lines;
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[4].kind, SummaryKind::failed);
  EXPECT_EQ(lines[4].text, "naive failed: verification failed: rel L2 5.0e-01");
  EXPECT_EQ(lines[5].text, "efficient was skipped: head dim 256 not supported");
}

TEST(Summary, FormatsPerProblemAndWrapsAtTheWidth) {
  const std::string text =
      format_summary(test::recorded("h200-default-run1.json"), TextStyle{100, false});
  EXPECT_EQ(
      text.rfind("\nsummary:\n  B8 H16 S1024 D64 bf16 causal\n    cudnn is fastest: 0.065 ms", 0),
      0u);
  EXPECT_NE(text.find("    math is 4.50x slower than naive-inplace: 20 kernels per forward against 5, fp32 SIMT GEMMs,\n"
                      "        tensor cores idle, causal mask rebuilt on every call, safe softmax\n"),
            std::string::npos);
  EXPECT_EQ(format_summary(RunReport{}), "");
}

}  // namespace
}  // namespace sdpa
