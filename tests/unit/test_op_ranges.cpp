// NVTX op ranges: nesting per thread, launch attribution to the innermost op, and the per-forward
// op table, on hand-made records (nested ranges, two threads, launches outside any op, ranges that
// never close).
#include <gtest/gtest.h>

#include "model/nvtx_ranges.h"
#include "model/ops.h"
#include "profile/profile_analysis.h"

namespace sdpa {
namespace {

constexpr uint32_t kMain = 7, kOther = 9;

struct Records {
  ActivityRecords r;
  uint32_t next_id = 1;
  uint32_t next_correlation = 1;

  // A range [start, end] on `thread`; end 0: it never ends.
  void range(const std::string& name, uint64_t start, uint64_t end, uint32_t thread = kMain) {
    const uint32_t id = next_id++;
    r.markers.push_back(MarkerRecord{id, start, true, name, "", 1, thread});
    if (end != 0) r.markers.push_back(MarkerRecord{id, end, false, "", "", 1, thread});
  }
  // A launch call [start, end] on `thread` and the kernel (or copy, or set) it launched.
  enum class Work { kernel, memcpy, memset, none };
  void launch(uint64_t start, uint64_t end, Work work = Work::kernel, uint32_t thread = kMain) {
    const uint32_t c = next_correlation++;
    ApiRecord a;
    a.start = start;
    a.end = end;
    a.correlation = c;
    a.name = work == Work::memcpy ? "cudaMemcpyAsync" : "cudaLaunchKernel";
    a.process_id = 1;
    a.thread_id = thread;
    r.api_calls.push_back(a);
    switch (work) {
      case Work::kernel: {
        KernelRecord k;
        k.name = "k";
        k.correlation = c;
        k.start = end + 10;
        k.end = end + 20;
        r.kernels.push_back(k);
        break;
      }
      case Work::memcpy:
        r.memcpys.push_back(MemcpyRecord{"DtoD", 64, end + 10, end + 20, c, {}});
        break;
      case Work::memset:
        r.memsets.push_back(MemsetRecord{64, end + 10, end + 20, c, {}});
        break;
      case Work::none:
        break;
    }
  }
};

// One forward of the out-of-place masked fill: masked_fill -> clone -> copy_ (the memcpy), then
// masked_fill_ (the kernel); softmax launches its kernel; one launch outside any op.
void masked_forward(Records& s, const std::string& name, uint64_t t) {
  s.range(name, t, t + 1000);
  s.range("aten::masked_fill, seq = 3, op_id = 10, sizes = [[8, 16, 1024, 1024], [1024, 1024], []]",
          t + 100, t + 400);
  s.range("aten::clone, op_id = 11, sizes = [[8, 16, 1024, 1024], []]", t + 110, t + 250);
  s.range("aten::copy_, op_id = 12", t + 150, t + 240);
  s.launch(t + 160, t + 200, Records::Work::memcpy);
  s.range("aten::masked_fill_, op_id = 13", t + 260, t + 390);
  s.launch(t + 300, t + 350);
  s.range("aten::_softmax, op_id = 14", t + 500, t + 600);
  s.launch(t + 520, t + 560);
  s.launch(t + 700, t + 720, Records::Work::memset);  // in the forward, outside every op
}

TEST(OpName, SplitsPyTorchSuffix) {
  const OpName n = split_op_name(
      "aten::transpose, seq = 12, op_id = 34, sizes = [[8, 16, 1024, 64], [], []], "
      "input_op_ids = [(33, 0)]");
  EXPECT_EQ(n.name, "aten::transpose");
  EXPECT_EQ(n.shapes, "[[8, 16, 1024, 64], [], []]");
  EXPECT_EQ(split_op_name("aten::ones, op_id = 2").shapes, "");
  EXPECT_EQ(split_op_name("my region").name, "my region");
  EXPECT_EQ(split_op_name("aten::tril, sizes = [[1024, 1024], []]").shapes, "[[1024, 1024], []]");
}

TEST(RangeTree, NestsPerThreadAndAttributesToTheInnermost) {
  Records s;
  s.range("outer", 100, 900);
  s.range("inner", 200, 300);
  s.range("other thread", 150, 800, kOther);  // overlaps both in time: no parent of theirs
  s.launch(210, 220);                         // inside inner
  s.launch(400, 410);                         // inside outer only
  s.launch(500, 510, Records::Work::kernel, kOther);
  s.launch(950, 960);                       // outside every range
  s.launch(230, 240, Records::Work::none);  // launched nothing: not a launch
  const RangeTree t = range_tree(s.r);
  ASSERT_EQ(t.ranges.size(), 3u);
  EXPECT_EQ(t.ranges[0].name, "outer");
  EXPECT_EQ(t.ranges[1].name, "other thread");
  EXPECT_EQ(t.ranges[1].parent, -1);
  EXPECT_EQ(t.ranges[2].name, "inner");
  EXPECT_EQ(t.ranges[2].parent, 0);
  EXPECT_EQ(t.ranges[2].depth, 1);
  EXPECT_EQ(t.launch_calls.size(), 4u);
  EXPECT_EQ(t.launched_in.at(1), 2u);
  EXPECT_EQ(t.launched_in.at(2), 0u);
  EXPECT_EQ(t.launched_in.at(3), 1u);
  EXPECT_FALSE(t.launched_in.contains(4));
  EXPECT_FALSE(t.launched_in.contains(5));
}

TEST(RangeTree, RangeThatNeverClosesEndsWithItsParent) {
  Records s;
  s.range("forward", 100, 500);
  s.range("aten::lost", 200, 0);
  s.range("after", 600, 700);
  s.launch(610, 620);
  const RangeTree t = range_tree(s.r);
  ASSERT_EQ(t.ranges.size(), 3u);
  EXPECT_FALSE(t.ranges[1].closed);
  EXPECT_EQ(t.ranges[1].end, 500u);
  EXPECT_EQ(t.ranges[2].parent, -1);  // not under the lost range
  EXPECT_EQ(t.launched_in.at(1), 2u);
}

TEST(RangeTree, RangeOpenAtTheEndHoldsWhatFollows) {
  Records s;
  s.range("cut short", 100, 0);
  s.range("aten::mm", 200, 300);
  s.launch(210, 220);
  const RangeTree t = range_tree(s.r);
  ASSERT_EQ(t.ranges.size(), 2u);
  EXPECT_EQ(t.ranges[1].parent, 0);
  EXPECT_EQ(t.launched_in.at(1), 1u);
}

TEST(OpTable, CallTreePerForward) {
  Records s;
  masked_forward(s, "sdpa-prof/torch:naive/B8_H16_S1024_D64_bf16_causal/fwd0", 1000);
  masked_forward(s, "sdpa-prof/torch:naive/B8_H16_S1024_D64_bf16_causal/fwd1", 5000);
  s.range("aten::masked_fill, op_id = 99", 9000, 9100);  // outside the forwards
  s.launch(9010, 9020);
  const RangeTree t = range_tree(s.r);
  std::vector<std::size_t> forwards;
  for (std::size_t i = 0; i < t.ranges.size(); ++i)
    if (t.ranges[i].name.starts_with("sdpa-prof/")) forwards.push_back(i);
  ASSERT_EQ(forwards.size(), 2u);
  const std::optional<OpsProfile> ops = op_table(s.r, t, forwards);
  ASSERT_TRUE(ops);
  ASSERT_EQ(ops->ops.size(), 5u);
  const OpProfile& fill = ops->ops[0];
  EXPECT_EQ(fill.name, "aten::masked_fill");
  EXPECT_EQ(fill.shapes, std::vector<std::string>{"[[8, 16, 1024, 1024], [1024, 1024], []]"});
  EXPECT_EQ(fill.parent, -1);
  EXPECT_DOUBLE_EQ(fill.calls, 1);
  EXPECT_DOUBLE_EQ(fill.total_us, 0.3);
  EXPECT_NEAR(fill.self_us, 0.03, 1e-9);
  EXPECT_EQ(ops->ops[1].name, "aten::clone");
  EXPECT_EQ(ops->ops[1].parent, 0);
  EXPECT_EQ(ops->ops[2].name, "aten::copy_");
  EXPECT_EQ(ops->ops[2].depth, 2);
  EXPECT_DOUBLE_EQ(ops->ops[2].memcpys, 1);
  EXPECT_DOUBLE_EQ(ops->ops[2].kernels, 0);
  EXPECT_DOUBLE_EQ(ops->ops[1].memcpys, 0);  // its child launched it
  EXPECT_EQ(ops->ops[3].name, "aten::masked_fill_");
  EXPECT_DOUBLE_EQ(ops->ops[3].kernels, 1);
  EXPECT_EQ(ops->ops[4].name, "aten::_softmax");
  EXPECT_EQ(ops->ops[4].depth, 0);
  EXPECT_DOUBLE_EQ(ops->launches_outside_ops, 1);
  EXPECT_DOUBLE_EQ(ops->host_us, 1.0);
  EXPECT_NEAR(ops->launch_api_us, 0.15, 1e-9);
  EXPECT_DOUBLE_EQ(ops->launches(), 3);
  EXPECT_EQ(ops->unclosed, 0);

  const std::vector<OpProfile> by_name = ops_by_name(*ops);
  EXPECT_EQ(by_name.size(), 5u);
  EXPECT_EQ(op_subtree(*ops, 0).size(), 4u);
  EXPECT_EQ(op_subtree(*ops, 4).size(), 1u);
}

TEST(OpTable, SameNameUnderTwoParentsIsTwoRowsOneName) {
  Records s;
  s.range("fwd", 0, 1000);
  s.range("aten::transpose", 10, 20);
  s.range("aten::_flash", 30, 200);
  s.range("aten::transpose", 40, 50);
  s.range("aten::transpose", 60, 70);
  const RangeTree t = range_tree(s.r);
  const std::optional<OpsProfile> ops = op_table(s.r, t, {0});
  ASSERT_TRUE(ops);
  ASSERT_EQ(ops->ops.size(), 3u);
  EXPECT_DOUBLE_EQ(ops->ops[2].calls, 2);
  const std::vector<OpProfile> by_name = ops_by_name(*ops);
  ASSERT_EQ(by_name.size(), 2u);
  EXPECT_EQ(by_name[0].name, "aten::transpose");
  EXPECT_DOUBLE_EQ(by_name[0].calls, 3);
}

TEST(OpTable, OpThatNeverClosesIsCountedNotTabled) {
  Records s;
  s.range("fwd", 0, 1000);
  s.range("aten::ok", 10, 20);
  s.range("aten::lost", 30, 0);
  s.range("aten::under_lost", 40, 50);
  const RangeTree t = range_tree(s.r);
  const std::optional<OpsProfile> ops = op_table(s.r, t, {0});
  ASSERT_TRUE(ops);
  ASSERT_EQ(ops->ops.size(), 1u);
  EXPECT_EQ(ops->unclosed, 1);
}

TEST(OpTable, NoneWithoutOpRanges) {
  Records s;
  s.range("fwd", 0, 1000);
  s.launch(10, 20);
  const RangeTree t = range_tree(s.r);
  EXPECT_FALSE(op_table(s.r, t, {0}));
  s.range("other thread op", 1010, 1020, kOther);  // after the forward
  s.range("open other thread op", 10, 0, kOther);  // never closed: not the forward's
  EXPECT_FALSE(op_table(s.r, range_tree(s.r), {0}));
}

// A backward: the calling thread waits in its range while autograd's thread runs the ops.
TEST(OpTable, OpsOnAnotherThreadInsideTheForwardAreItsOwn) {
  Records s;
  s.range("bwd", 0, 1000);
  s.launch(5, 8);  // on the calling thread, outside every op
  s.range("autograd::engine::evaluate_function: MmBackward0", 100, 400, kOther);
  s.range("aten::mm", 120, 300, kOther);
  s.launch(150, 190, Records::Work::kernel, kOther);
  s.range("aten::mul", 500, 600, kOther);
  s.launch(520, 540, Records::Work::kernel, kOther);
  s.range("aten::late", 900, 1100, kOther);             // outlives the forward: not its own
  s.launch(1200, 1210, Records::Work::kernel, kOther);  // after the forward
  const RangeTree t = range_tree(s.r);
  const std::optional<OpsProfile> ops = op_table(s.r, t, {0});
  ASSERT_TRUE(ops);
  ASSERT_EQ(ops->ops.size(), 3u);
  EXPECT_EQ(ops->ops[0].name, "autograd::engine::evaluate_function: MmBackward0");
  EXPECT_EQ(ops->ops[0].depth, 0);
  EXPECT_EQ(ops->ops[1].name, "aten::mm");
  EXPECT_EQ(ops->ops[1].parent, 0);
  EXPECT_DOUBLE_EQ(ops->ops[1].kernels, 1);
  EXPECT_EQ(ops->ops[2].name, "aten::mul");
  EXPECT_DOUBLE_EQ(ops->ops[2].kernels, 1);
  EXPECT_DOUBLE_EQ(ops->launches_outside_ops, 1);
  EXPECT_NEAR(ops->launch_api_us, 0.003 + 0.04 + 0.02,
              1e-9);  // the calling thread's and autograd's
}

TEST(OpTable, AnalysisFillsTheProfile) {
  Records s;
  masked_forward(s, "f0", 1000);
  const CaseProfile p = analyze_activity(s.r, {ForwardWindow{"f0", 0, 0}}, std::nullopt, 0);
  ASSERT_TRUE(p.ops);
  EXPECT_EQ(p.ops->ops.size(), 5u);
  const CaseProfile without =
      analyze_activity(s.r, {ForwardWindow{"not a range", 1000, 2000}}, std::nullopt, 0);
  EXPECT_FALSE(without.ops);
}

}  // namespace
}  // namespace sdpa
