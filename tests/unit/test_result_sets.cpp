// Parts of one sweep: shards (--shard K/N), resumed runs (--resume), and `merge`.
#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "axis_values.h"
#include "backends/backend.h"
#include "model/case_key.h"
#include "model/errors.h"
#include "model/sweep.h"
#include "recorded_results.h"
#include "report/report.h"
#include "report/result_sets.h"
#include "run/runner.h"
#include "run/shard_plan.h"

namespace sdpa {
namespace {

SweepPlan mixed_plan() {
  SweepConfig c;
  c.axes["seq"] = test::ints({1, 17, 1000, 4097, 16384});
  c.axes["dtype"] = test::texts({"bf16", "fp16"});
  return SweepPlan{expand_problems(c), resolve_backends({"naive", "math", "flash", "efficient"})};
}

TEST(Shards, EveryCaseIsInExactlyOneShardAndTheAssignmentIsTheSameEachTime) {
  const SweepPlan plan = mixed_plan();
  for (const int count : {1, 2, 3, 7, 40, 41, 100}) {
    const std::vector<int> shard = assign_shards(plan, count);
    ASSERT_EQ(shard.size(), plan.problems.size() * plan.backends.size());
    for (const int k : shard) {
      EXPECT_GE(k, 1);
      EXPECT_LE(k, count);
    }
    EXPECT_EQ(shard, assign_shards(plan, count));
  }
}

TEST(Shards, ShardsAreBalancedByPredictedCost) {
  const SweepPlan plan = mixed_plan();
  const std::size_t choices = plan.backends.size();
  for (const int count : {2, 3, 4}) {
    const std::vector<int> shard = assign_shards(plan, count);
    std::vector<double> load(static_cast<std::size_t>(count), 0.0);
    double largest = 0;
    for (std::size_t i = 0; i < shard.size(); ++i) {
      const double cost = predicted_case_seconds(plan.problems[i / choices], plan.backends[i % choices]);
      load[static_cast<std::size_t>(shard[i] - 1)] += cost;
      largest = std::max(largest, cost);
    }
    const auto [low, high] = std::minmax_element(load.begin(), load.end());
    // Longest-first to the least loaded: no shard exceeds another by more than one case.
    EXPECT_LE(*high - *low, largest) << count << " shards";
  }
}

TEST(Shards, AnUnfusedCaseAtALongSequenceCostsMoreThanAFusedOne) {
  Problem p;
  p.seq_q = p.seq_kv = 16384;
  p.heads = p.kv_heads = 16;
  p.batch = 8;
  const auto naive = resolve_backends({"naive"}).at(0);
  const auto flash = resolve_backends({"flash"}).at(0);
  EXPECT_GT(predicted_case_seconds(p, naive), predicted_case_seconds(p, flash));
}

TEST(ResultSets, PartsOfOneSweepHaveNoDifference) {
  const RunReport a = test::recorded("h200-default-run1.json");
  const RunReport b = test::recorded("h200-default-run2.json");
  EXPECT_EQ(sweep_difference(a, b), "");
}

TEST(ResultSets, TheDifferenceNamesTheField) {
  const RunReport a = test::recorded("h200-default-run1.json");
  RunReport b = a;
  b.config.axes["seq"] = test::ints({1024});
  EXPECT_EQ(sweep_difference(a, b), "the config's \"seq\": [1024,2048,4096] there, [1024] here");
  b = a;
  b.environment.device->name = "NVIDIA A100-SXM4-80GB";
  EXPECT_EQ(sweep_difference(a, b), "the GPU: NVIDIA H200 there, NVIDIA A100-SXM4-80GB here");
  b = a;
  b.environment.tool_version = "9.9.9";
  EXPECT_NE(sweep_difference(a, b).find("the tool version"), std::string::npos);
}

// Two shards of a recorded run, split as --shard would split them, merge back to its case list.
TEST(ResultSets, TwoShardsMergeToTheWholeRun) {
  const RunReport whole = test::recorded("h200-default-run1.json");
  RunReport first = whole;
  RunReport second = whole;
  first.cases.clear();
  second.cases.clear();
  for (std::size_t i = 0; i < whole.cases.size(); ++i) (i % 3 == 0 ? first : second).cases.push_back(whole.cases[i]);
  first.shard = Shard{1, 2};
  second.shard = Shard{2, 2};
  const RunReport merged = merge_reports({{"a.json", first}, {"b.json", second}});
  EXPECT_FALSE(merged.partial) << merged.partial_reason;
  EXPECT_FALSE(merged.shard.has_value());
  std::set<std::string> want;
  std::set<std::string> got;
  for (const CaseResult& c : whole.cases) want.insert(case_key(c.backend, c.problem).text());
  for (const CaseResult& c : merged.cases) got.insert(case_key(c.backend, c.problem).text());
  EXPECT_EQ(got, want);
  EXPECT_EQ(merged.cases.size(), whole.cases.size());

  const RunReport alone = merge_reports({{"a.json", first}});
  EXPECT_TRUE(alone.partial);
  EXPECT_EQ(alone.partial_reason, "shard 2 of 2 missing");
}

// Parts from two GPUs of one model (--devices): the merged result lists both, and each case
// names the GPU it ran on; the JSON keeps both.
TEST(ResultSets, PartsFromTwoGpusNameEachCasesGpu) {
  const RunReport whole = test::recorded("h200-default-run1.json");
  RunReport first = whole;
  RunReport second = whole;
  first.cases.resize(2);
  second.cases.assign(whole.cases.begin() + 2, whole.cases.end());
  second.environment.device->uuid = "GPU-second";
  const RunReport merged = merge_reports({{"a.json", first}, {"b.json", second}});
  ASSERT_EQ(merged.environment.devices.size(), 2u);
  EXPECT_EQ(merged.environment.devices[1].uuid, "GPU-second");
  EXPECT_EQ(merged.cases.front().device_uuid, whole.environment.device->uuid);
  EXPECT_EQ(merged.cases.back().device_uuid, "GPU-second");
  const RunReport read_back = report_from_json(report_to_json(merged));
  EXPECT_EQ(read_back.environment.devices.size(), 2u);
  EXPECT_EQ(read_back.cases.back().device_uuid, "GPU-second");
  EXPECT_TRUE(merge_reports({{"a.json", first}}).environment.devices.empty());  // one GPU: no list
}

TEST(ResultSets, MergeRefusesACaseInTwoPartsAndPartsOfOtherSweeps) {
  const RunReport whole = test::recorded("h200-default-run1.json");
  try {
    merge_reports({{"a.json", whole}, {"b.json", whole}});
    FAIL() << "a case in two parts was merged";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is in both a.json and b.json"), std::string::npos) << e.what();
  }
  RunReport other = whole;
  other.cases.clear();
  other.config.axes["dtype"] = test::texts({"fp16"});
  try {
    merge_reports({{"a.json", whole}, {"c.json", other}});
    FAIL() << "parts of two sweeps were merged";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a.json and c.json measured different sweeps: the config's \"dtype\""),
              std::string::npos)
        << e.what();
  }
}

TEST(ResultSets, AResumedRunKeepsAllButTheCaseASignalCutShort) {
  RunReport earlier = test::recorded("h200-default-run1.json");
  ASSERT_TRUE(earlier.cases.back().timing.has_value());
  earlier.cases.back().timing->interrupted = true;
  EXPECT_EQ(finished_cases(earlier).size(), earlier.cases.size() - 1);
}

// The sweep runs what a resumed run has not: SweepPlan::case_count with done cases and a shard.
TEST(ResultSets, APlanLeavesOutDoneCasesAndOtherShards) {
  SweepPlan plan = mixed_plan();
  const std::size_t all = plan.case_count();
  EXPECT_EQ(all, plan.problems.size() * plan.backends.size());
  plan.done.insert(case_key("naive", plan.problems.front()));
  EXPECT_EQ(plan.case_count(), all - 1);
  std::size_t held = 0;
  for (const int k : assign_shards(plan, 2)) {
    plan.selected.push_back(k == 1);
    held += k == 1;
  }
  const bool done_case_held = plan.selected.front();  // problem 0, choice 0: the done "naive"
  EXPECT_EQ(plan.case_count(), held - (done_case_held ? 1 : 0));
  EXPECT_LT(plan.case_count(), all);
}

}  // namespace
}  // namespace sdpa
