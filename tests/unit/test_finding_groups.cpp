#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "recorded_results.h"
#include "report/finding_groups.h"

namespace sdpa {
namespace {

// The default run on the H200 (S 1024, 2048, 4096): each finding once per backend and kind, with
// each shape's figure, named by the one part of the shape that differs.
TEST(FindingGroups, OneLinePerBackendAndKindAcrossTheShapes) {
  const std::vector<FindingGroup> groups = group_findings(test::recorded("h200-default-run1.json"), false);
  std::vector<std::string> kinds;
  for (const FindingGroup& g : groups) kinds.push_back(g.backend + " " + g.rule);
  EXPECT_EQ(kinds, (std::vector<std::string>{"naive hidden-memcpy", "math simt-gemm", "math mask-every-call",
                                             "math safe-softmax", "efficient low-occupancy", "flash low-occupancy",
                                             "cudnn low-clock"}));
  const FindingGroup& copy = groups[0];
  EXPECT_EQ(copy.head,
            "hidden device-to-device copy per forward (an out-of-place op, such as masked_fill, copies its input first)");
  EXPECT_EQ(copy.figures, (std::vector<std::pair<std::string, std::string>>{
                              {"S1024", "256 MiB, 127 us"}, {"S2048", "1.0 GiB, 509 us"}, {"S4096", "4.0 GiB, 2.02 ms"}}));
  // Words every shape shares move into the head: "4 kernels" once, the times per shape.
  EXPECT_EQ(groups[2].head, "causal mask rebuilt on every call: 4 kernels");
  EXPECT_EQ(groups[2].figures[2], (std::pair<std::string, std::string>{"S4096", "241 us"}));
  EXPECT_TRUE(groups[4].every_case);
}

// cuBLAS's and cuDNN's kernels run at low occupancy by design: only --kernels and --wide say so.
TEST(FindingGroups, LibraryKernelsOccupancyOnlyWhenEverythingIsAsked) {
  const RunReport report = test::recorded("h200-default-run1.json");
  const auto has = [](const std::vector<FindingGroup>& groups, const std::string& backend, const std::string& rule) {
    for (const FindingGroup& g : groups)
      if (g.backend == backend && g.rule == rule) return true;
    return false;
  };
  EXPECT_FALSE(has(group_findings(report, false), "cudnn", "low-occupancy"));
  EXPECT_FALSE(has(group_findings(report, false), "math", "low-occupancy"));
  EXPECT_TRUE(has(group_findings(report, true), "cudnn", "low-occupancy"));
  EXPECT_TRUE(has(group_findings(report, true), "math", "low-occupancy"));
}

TEST(FindingGroups, FormatsOneWrappedLinePerGroup) {
  const std::string text = format_findings(test::recorded("h200-default-run1.json"), TextStyle{100, false}, false);
  EXPECT_EQ(text.rfind("\nfindings:\n  naive: hidden device-to-device copy per forward", 0), 0u) << text;
  EXPECT_NE(text.find("\n      its input first): S1024 256 MiB, 127 us; S2048 1.0 GiB, 509 us; S4096 4.0 GiB, 2.02 ms\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(format_findings(RunReport{}, TextStyle{}, false), "");
}

}  // namespace
}  // namespace sdpa
