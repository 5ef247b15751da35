// The op findings (the study's CPU claims) on hand-made op tables: each shows with its figures
// when the ops hold it, and says nothing when they do not.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "profile/op_findings.h"

namespace sdpa {
namespace {

OpProfile op(const std::string& name, int parent, int depth, double calls, double total_us, double kernels = 0,
             double memcpys = 0) {
  OpProfile o;
  o.name = name;
  o.parent = parent;
  o.depth = depth;
  o.calls = calls;
  o.total_us = total_us;
  o.self_us = total_us;
  o.kernels = kernels;
  o.memcpys = memcpys;
  return o;
}

CaseResult traced(const std::string& backend, std::vector<OpProfile> ops, int seq = 1024) {
  CaseResult c;
  c.backend = backend;
  c.problem.seq_q = seq;
  c.problem.seq_kv = seq;
  c.status = CaseStatus::ok;
  c.profile = CaseProfile{};
  c.profile->ops = OpsProfile{};
  c.profile->ops->ops = std::move(ops);
  return c;
}

// The finding of that rule, if any (a copy: op_findings returns a temporary).
std::optional<Finding> rule(const std::vector<Finding>& found, const std::string& name) {
  const auto it = std::find_if(found.begin(), found.end(), [&](const Finding& f) { return f.rule == name; });
  return it == found.end() ? std::nullopt : std::optional<Finding>(*it);
}

CaseResult out_of_place() {
  return traced("torch:naive", {op("aten::matmul", -1, 0, 1, 20, 1), op("aten::masked_fill", -1, 0, 1, 30),
                                op("aten::clone", 1, 1, 1, 14), op("aten::copy_", 2, 2, 1, 9, 0, 1),
                                op("aten::masked_fill_", 1, 1, 1, 12, 1)});
}

CaseResult in_place() { return traced("torch:naive-inplace", {op("aten::masked_fill_", -1, 0, 1, 11, 1)}); }

TEST(OpFindings, OutOfPlaceMaskedFillAgainstInPlace) {
  const std::vector<CaseResult> cases = {out_of_place(), in_place()};
  const std::optional<Finding> f = rule(op_findings(cases[0], cases), "masked-fill-ops");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->text,
            "the out-of-place masked fill's extra CPU ops: 4 op calls (aten::masked_fill, aten::clone, aten::copy_, "
            "aten::masked_fill_), 30.0 us CPU; the memcpy (1 per forward) launched by aten::copy_, against the "
            "in-place one's (torch:naive-inplace): 1 op call (aten::masked_fill_), 11.0 us CPU");
  EXPECT_FALSE(rule(op_findings(cases[1], cases), "masked-fill-ops"));  // the in-place case has fewer
}

TEST(OpFindings, MaskedFillNeedsBothOnTheSameProblem) {
  EXPECT_FALSE(rule(op_findings(out_of_place(), {out_of_place()}), "masked-fill-ops"));
  const std::vector<CaseResult> other_problem = {out_of_place(), traced("torch:naive-inplace",
                                                                        {op("aten::masked_fill_", -1, 0, 1, 11, 1)}, 4096)};
  EXPECT_FALSE(rule(op_findings(other_problem[0], other_problem), "masked-fill-ops"));
}

TEST(OpFindings, MaskBuiltEveryCall) {
  const CaseResult math = traced("torch:math", {op("aten::ones", -1, 0, 1, 8), op("aten::fill_", 0, 1, 1, 4, 1),
                                                op("aten::tril", -1, 0, 1, 6, 1)});
  const std::optional<Finding> f = rule(op_findings(math, {math}), "mask-ops-every-call");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->text, "causal mask built on the CPU in every forward: aten::ones 1 and aten::tril 1 per forward, 14.0 us "
                     "CPU, 2 kernels launched");
  const CaseResult no_tril = traced("torch:math", {op("aten::ones", -1, 0, 1, 8)});
  EXPECT_FALSE(rule(op_findings(no_tril, {no_tril}), "mask-ops-every-call"));
}

TEST(OpFindings, SafeSoftmax) {
  const CaseResult math =
      traced("torch:math", {op("aten::_safe_softmax", -1, 0, 1, 25), op("aten::_softmax", 0, 1, 1, 10, 1),
                            op("aten::isneginf", 0, 1, 1, 5, 1), op("aten::where", 0, 1, 1, 6, 1)});
  const std::optional<Finding> f = rule(op_findings(math, {math}), "safe-softmax-ops");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->text, "the safe softmax's CPU ops: 4 op calls (aten::_safe_softmax, aten::_softmax, aten::isneginf, "
                     "aten::where), 25.0 us CPU, 3 kernels launched");
  EXPECT_FALSE(rule(op_findings(in_place(), {in_place()}), "safe-softmax-ops"));
}

CaseResult flash(int transposes) {
  std::vector<OpProfile> ops = {op("aten::scaled_dot_product_attention", -1, 0, 1, 60),
                                op("aten::_scaled_dot_product_flash_attention", 0, 1, 1, 50)};
  if (transposes > 0) {
    ops.push_back(op("aten::transpose", 1, 2, transposes, 2.0 * transposes));
    // Each transpose calls as_strided, as PyTorch's does: not a transpose of its own.
    ops.push_back(op("aten::as_strided", 2, 3, transposes, 0.5 * transposes));
  }
  ops.push_back(op("aten::_flash_attention_forward", 1, 2, 1, 30, 1));
  return traced("torch:flash", ops);
}

CaseResult cudnn(int transposes) {
  std::vector<OpProfile> ops = {op("aten::scaled_dot_product_attention", -1, 0, 1, 90),
                                op("aten::_scaled_dot_product_cudnn_attention", 0, 1, 1, 85, 1)};
  if (transposes > 0) ops.push_back(op("aten::transpose", 1, 2, transposes, 1.0 * transposes));
  return traced("torch:cudnn", ops);
}

TEST(OpFindings, TransposesInFlashAbsentInCudnn) {
  const std::vector<CaseResult> cases = {flash(4), cudnn(0)};
  const std::optional<Finding> f = rule(op_findings(cases[0], cases), "flash-transposes");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->text, "transposes in the flash path: 4 aten::transpose per forward, 8.0 us CPU; cuDNN's path "
                     "(torch:cudnn) has none");
  EXPECT_FALSE(rule(op_findings(cases[1], cases), "flash-transposes"));  // said on the flash case
}

TEST(OpFindings, TransposesSayWhatIsTrueNow) {
  const std::vector<CaseResult> both = {flash(4), cudnn(2)};
  EXPECT_EQ(rule(op_findings(both[0], both), "flash-transposes")->text,
            "transposes in the flash path: 4 aten::transpose per forward, 8.0 us CPU; cuDNN's path (torch:cudnn) 2, "
            "2.0 us");
  const std::vector<CaseResult> none = {flash(0), cudnn(0)};
  EXPECT_FALSE(rule(op_findings(none[0], none), "flash-transposes"));
  const std::vector<CaseResult> alone = {flash(4)};
  EXPECT_EQ(rule(op_findings(alone[0], alone), "flash-transposes")->text,
            "transposes in the flash path: 4 aten::transpose per forward, 8.0 us CPU");
}

TEST(OpFindings, HostPerCallCudnnAgainstFlash) {
  std::vector<CaseResult> cases = {flash(4), cudnn(0)};
  EXPECT_FALSE(rule(op_findings(cases[1], cases), "host-cudnn-flash"));  // no host times
  cases[0].host = HostCost{0, 0, 138, 30};
  cases[1].host = HostCost{0, 0, 214, 30};
  const std::optional<Finding> f = rule(op_findings(cases[1], cases), "host-cudnn-flash");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->text, "host time per call, cuDNN's path against flash's (torch:flash): 214.0 us against 138.0 us "
                     "(1.55x); traced, aten::scaled_dot_product_attention takes 90.0 us against 60.0 us");
  EXPECT_FALSE(rule(op_findings(cases[0], cases), "host-cudnn-flash"));  // said on the cuDNN case
}

TEST(OpFindings, NoneWithoutOps) {
  CaseResult plain;
  plain.profile = CaseProfile{};
  EXPECT_TRUE(op_findings(plain, {plain}).empty());
  std::vector<CaseResult> cases = {out_of_place(), in_place()};
  add_op_findings(cases);
  ASSERT_EQ(cases[0].profile->findings.size(), 1u);
  EXPECT_EQ(cases[0].profile->findings[0].rule, "masked-fill-ops");
  EXPECT_TRUE(cases[1].profile->findings.empty());
}

}  // namespace
}  // namespace sdpa
