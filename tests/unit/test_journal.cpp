// The journal: the --json file after every case, readable and marked partial until the end.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/journal.h"
#include "recorded_results.h"
#include "report/report.h"

namespace fs = std::filesystem;

namespace sdpa {
namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / fmt::format("sdpa-journal-{}", getpid());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

RunReport read(const fs::path& path) {
  std::ifstream in(path);
  return report_from_json(nlohmann::json::parse(in));
}

TEST(Journal, EachWriteIsAReadablePartialResultWithTheCasesSoFar) {
  const TempDir dir;
  const fs::path path = dir.path / "out.json";
  const RunReport whole = test::recorded("h200-default-run1.json");
  RunReport report = whole;
  report.cases.clear();
  Journal journal(path.string(), 1e9);  // any cost is within its share: every case is written
  for (std::size_t i = 0; i < 3; ++i) {
    report.cases.push_back(whole.cases[i]);
    journal.write(report);
    const RunReport on_disk = read(path);
    EXPECT_EQ(on_disk.cases.size(), i + 1);
    EXPECT_TRUE(on_disk.partial);
    EXPECT_EQ(on_disk.partial_reason,
              fmt::format("the sweep was still running after {} cases (the journal)", i + 1));
  }
  EXPECT_FALSE(report.partial) << "the journal marks the file, not the run";
  EXPECT_NE(journal.summary().find("journal: 3 writes for 3 cases to " + path.string()), std::string::npos)
      << journal.summary();
}

// A journal whose writes cost more than their share of the time between cases writes less often:
// with no share at all, only the first case is written.
TEST(Journal, CostlyWritesWaitForMoreCases) {
  const TempDir dir;
  const fs::path path = dir.path / "out.json";
  const RunReport whole = test::recorded("h200-default-run1.json");
  RunReport report = whole;
  report.cases.clear();
  Journal journal(path.string(), 0.0);
  for (std::size_t i = 0; i < 3; ++i) {
    report.cases.push_back(whole.cases[i]);
    journal.write(report);
  }
  EXPECT_EQ(read(path).cases.size(), 1u);
  EXPECT_NE(journal.summary().find("journal: 1 writes for 3 cases"), std::string::npos) << journal.summary();
}

TEST(Journal, NoJournalWithoutAFileOrOnADevice) {
  RunReport report = test::recorded("h200-default-run1.json");
  Journal none("");
  none.write(report);
  EXPECT_EQ(none.summary(), "");
  Journal device("/dev/null");  // written once at the end, never rewritten case by case
  device.write(report);
  EXPECT_EQ(device.summary(), "");
}

}  // namespace
}  // namespace sdpa
