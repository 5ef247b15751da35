#include <gtest/gtest.h>

#include "axis_values.h"
#include "model/errors.h"

#include "backends/backend.h"
#include "run/runner.h"
#include "model/sweep.h"

namespace sdpa {
namespace {

TEST(Sweep, ExpandsTheCartesianProduct) {
  SweepConfig c;
  c.axes["seq"] = test::ints({1024, 2048, 4096});
  c.axes["dtype"] = test::texts({"bf16", "fp16"});
  c.axes["causal"] = test::bools({true, false});
  c.axes["head_dim"] = test::ints({64, 128});
  EXPECT_EQ(expand_problems(c).size(), 3u * 2 * 2 * 2);
}

TEST(Sweep, ASweepPastTheCapIsRefusedBeforeItIsExpanded) {
  SweepConfig c;
  std::vector<AxisValue> many;
  for (int64_t v = 1; v <= 1000; ++v) many.emplace_back(v * 64);
  for (const char* axis : {"seq", "batch", "heads"}) c.axes[axis] = many;  // 10^9 problems
  try {
    expand_problems(c);
    FAIL() << "10^9 problems expanded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the sweep has 1000000000 cases, more than the 100000"), std::string::npos) << e.what();
  }
  c.axes.erase("heads");
  c.axes.erase("batch");
  EXPECT_NO_THROW(check_sweep_size(c, 100));
  EXPECT_THROW(check_sweep_size(c, 101), InputError);  // 1000 problems of 101 backends
}

// The launch varies fastest: a problem's graph case follows its eager one. Without the axis every
// case is eager (what every preset before it meant).
TEST(Sweep, TheLaunchVariesFastestAndDefaultsToEager) {
  SweepConfig c;
  c.axes["seq"] = test::ints({1024, 4096});
  c.axes["pass"] = test::texts({"fwd", "bwd"});
  c.axes["launch"] = test::texts({"eager", "graph"});
  const std::vector<Problem> problems = expand_problems(c);
  ASSERT_EQ(problems.size(), 8u);
  for (std::size_t i = 0; i < problems.size(); ++i) {
    EXPECT_EQ(problems[i].launch, i % 2 == 0 ? LaunchMode::eager : LaunchMode::graph) << i;
    EXPECT_EQ(problems[i].pass, (i / 2) % 2 == 0 ? AttentionPass::forward : AttentionPass::backward) << i;
  }
  c.axes.erase("launch");
  for (const Problem& p : expand_problems(c)) EXPECT_EQ(p.launch, LaunchMode::eager);
}

TEST(Sweep, KvHeadsAndSeqKvDefaultToHeadsAndSeq) {
  SweepConfig c;
  c.axes["heads"] = test::ints({16});
  c.axes["seq"] = test::ints({100});
  const auto problems = expand_problems(c);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kv_heads, 16);
  EXPECT_EQ(problems[0].seq_kv, 100);
}

TEST(Sweep, RejectsBadAxes) {
  SweepConfig c;
  c.axes["heads"] = test::ints({16});
  c.axes["kv_heads"] = test::ints({3});
  EXPECT_THROW(expand_problems(c), InputError);
  c.axes.erase("kv_heads");
  c.axes["seq"] = {};
  EXPECT_THROW(expand_problems(c), InputError);
  c.axes.erase("seq");
  c.axes["window"] = test::ints({1});
  EXPECT_THROW(expand_problems(c), InputError);
  c.axes.erase("window");
  c.stopping.min_samples = 0;
  EXPECT_THROW(expand_problems(c), InputError);
  c.stopping.min_samples = 10;
  c.stopping.max_noise = 0;
  EXPECT_THROW(expand_problems(c), InputError);
}

TEST(Sweep, DuplicateValuesRunOnce) {
  SweepConfig c;
  c.axes["seq"] = test::ints({1024, 1024, 512});
  const auto problems = expand_problems(c);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].seq_q, 1024);
  EXPECT_EQ(problems[1].seq_q, 512);
}

TEST(MemoryPrediction, CountsInputsReferenceAndWorkspace) {
  Problem p;
  p.batch = 8;
  p.heads = 16;
  p.kv_heads = 16;
  p.seq_q = p.seq_kv = 4096;
  p.head_dim = 64;
  p.causal = true;
  const std::size_t io = 4 * 8 * 16 * 4096 * 64 * 2;   // Q, K, V, O in bf16
  const std::size_t ref = 8 * 16 * 4096 * 64 * 4;      // fp32 reference output
  const std::size_t scratch = std::size_t{256} << 20;  // capped reference scratch
  EXPECT_GE(shared_case_bytes(p), io + ref + scratch);
  EXPECT_LT(shared_case_bytes(p), io + ref + scratch + 1024);

  const BackendEntry* naive = find_backend("naive");
  ASSERT_NE(naive, nullptr);
  const std::size_t scores = std::size_t{8} * 16 * 4096 * 4096 * 2;
  EXPECT_EQ(predicted_case_bytes(p, *naive), shared_case_bytes(p) + 2 * scores + 4096 * 4096);
  // math keeps two fp32 score buffers: more than twice naive's workspace.
  EXPECT_GT(find_backend("math")->workspace_bytes(p), 2 * naive->workspace_bytes(p));
}

TEST(Registry, ListsEveryBackendOnce) {
  std::vector<std::string> names;
  for (const BackendEntry& e : backend_registry()) names.emplace_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"naive", "naive-inplace", "math", "efficient", "flash", "flash3", "cudnn"}));
  EXPECT_TRUE(find_backend("naive")->built());
  EXPECT_EQ(find_backend("nope"), nullptr);
}

}  // namespace
}  // namespace sdpa
