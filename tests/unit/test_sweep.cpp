#include <gtest/gtest.h>

#include "backend.h"
#include "runner.h"
#include "sweep.h"

namespace sdpa {
namespace {

TEST(Sweep, ExpandsTheCartesianProduct) {
  SweepConfig c;
  c.seq = {1024, 2048, 4096};
  c.dtypes = {DType::bf16, DType::fp16};
  c.causal = {true, false};
  c.head_dim = {64, 128};
  EXPECT_EQ(expand_problems(c).size(), 3u * 2 * 2 * 2);
}

TEST(Sweep, KvHeadsAndSeqKvDefaultToHeadsAndSeq) {
  SweepConfig c;
  c.heads = {16};
  c.seq = {100};
  const auto problems = expand_problems(c);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kv_heads, 16);
  EXPECT_EQ(problems[0].seq_kv, 100);
}

TEST(Sweep, RejectsBadAxes) {
  SweepConfig c;
  c.seq = {0};
  EXPECT_THROW(expand_problems(c), InputError);
  c.seq = {64};
  c.batch = {-2};
  EXPECT_THROW(expand_problems(c), InputError);
  c.batch = {1};
  c.heads = {16};
  c.kv_heads = {3};
  EXPECT_THROW(expand_problems(c), InputError);
  c.kv_heads = {};
  c.stopping.min_samples = 0;
  EXPECT_THROW(expand_problems(c), InputError);
  c.stopping.min_samples = 10;
  c.stopping.max_noise = 0;
  EXPECT_THROW(expand_problems(c), InputError);
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
  EXPECT_EQ(names, (std::vector<std::string>{"naive", "naive-inplace", "math", "efficient", "flash", "cudnn"}));
  EXPECT_TRUE(find_backend("naive")->built());
  EXPECT_EQ(find_backend("nope"), nullptr);
}

}  // namespace
}  // namespace sdpa
