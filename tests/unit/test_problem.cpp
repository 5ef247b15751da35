#include <gtest/gtest.h>

#include "model/problem.h"

namespace sdpa {
namespace {

Problem make(int64_t sq, int64_t skv, bool causal) {
  Problem p;
  p.batch = 8;
  p.heads = 16;
  p.kv_heads = 16;
  p.seq_q = sq;
  p.seq_kv = skv;
  p.head_dim = 64;
  p.causal = causal;
  return p;
}

TEST(Problem, NonCausalCountsEveryPair) {
  const Problem p = make(1024, 1024, false);
  EXPECT_EQ(p.unmasked_pairs(), 1024 * 1024);
  EXPECT_DOUBLE_EQ(p.flops(), 4.0 * 8 * 16 * 64 * 1024 * 1024);
}

TEST(Problem, CausalCountsTheVisibleTriangle) {
  EXPECT_EQ(make(1, 1, true).unmasked_pairs(), 1);
  EXPECT_EQ(make(4, 4, true).unmasked_pairs(), 1 + 2 + 3 + 4);
  EXPECT_EQ(make(1024, 1024, true).unmasked_pairs(), 1024 * 1025 / 2);
}

TEST(Problem, CausalWithUnequalLengthsIsTopLeftAligned) {
  // Sq > Skv: rows past Skv see every key.
  EXPECT_EQ(make(5, 3, true).unmasked_pairs(), 1 + 2 + 3 + 3 + 3);
  // Sq < Skv: row i sees i + 1 keys.
  EXPECT_EQ(make(3, 5, true).unmasked_pairs(), 1 + 2 + 3);
}

TEST(Problem, MinimalBytesReadInputsOnceAndWriteOutputOnce) {
  Problem p = make(128, 256, false);
  p.kv_heads = 4;
  const double q = 8.0 * 16 * 128 * 64;
  const double kv = 8.0 * 4 * 256 * 64;
  EXPECT_DOUBLE_EQ(p.min_bytes(), 2 * (2 * q + 2 * kv));
}

TEST(Problem, BackwardCountsTwoAndAHalfForwardsAndItsOwnTensors) {
  Problem p = make(128, 256, true);
  p.kv_heads = 4;
  const double forward = p.flops();
  const double q = 8.0 * 16 * 128 * 64;
  const double kv = 8.0 * 4 * 256 * 64;
  p.pass = AttentionPass::backward;
  EXPECT_DOUBLE_EQ(p.flops(), 2.5 * forward);
  EXPECT_DOUBLE_EQ(p.forward_flops(), forward);
  // Q, K, V, O, dO read; dQ, dK, dV written.
  EXPECT_DOUBLE_EQ(p.min_bytes(), 2 * (5 * q + 4 * kv));
  p.pass = AttentionPass::forward_backward;
  EXPECT_DOUBLE_EQ(p.flops(), 3.5 * forward);
  // Q, K, V, dO read; O, dQ, dK, dV written.
  EXPECT_DOUBLE_EQ(p.min_bytes(), 2 * (4 * q + 4 * kv));
}

TEST(Problem, PassNamesRoundTrip) {
  for (const char* name : {"fwd", "bwd", "fwd+bwd"}) {
    AttentionPass pass{};
    ASSERT_TRUE(parse_pass(name, pass)) << name;
    EXPECT_STREQ(pass_name(pass), name);
  }
  AttentionPass pass{};
  EXPECT_FALSE(parse_pass("backward", pass));
  EXPECT_FALSE(parse_pass("", pass));
}

TEST(Problem, LaunchNamesRoundTrip) {
  for (const char* name : {"eager", "graph"}) {
    LaunchMode launch{};
    ASSERT_TRUE(parse_launch(name, launch)) << name;
    EXPECT_STREQ(launch_name(launch), name);
  }
  LaunchMode launch{};
  EXPECT_FALSE(parse_launch("graphs", launch));
  EXPECT_FALSE(parse_launch("", launch));
}

// A graph launch changes neither the work nor its FLOPs; the label says it.
TEST(Problem, AGraphLaunchIsTheSameWorkLabelled) {
  Problem p = make(1024, 1024, true);
  const double flops = p.flops(), bytes = p.min_bytes();
  const std::string eager = p.shape_label();
  p.launch = LaunchMode::graph;
  EXPECT_DOUBLE_EQ(p.flops(), flops);
  EXPECT_DOUBLE_EQ(p.min_bytes(), bytes);
  EXPECT_EQ(p.shape_label(), eager + " graph");
  p.pass = AttentionPass::backward;
  EXPECT_EQ(p.shape_label(), eager + " bwd graph");
}

TEST(Problem, DefaultScaleIsInverseSquareRootOfHeadDim) {
  Problem p = make(1, 1, false);
  EXPECT_DOUBLE_EQ(p.softmax_scale(), 0.125);
  p.scale = 0.5;
  EXPECT_DOUBLE_EQ(p.softmax_scale(), 0.5);
}

TEST(Problem, SizesPastAnyGpuAreRefusedWithoutOverflow) {
  EXPECT_EQ(problem_error(make(1024, 1024, true)), "");
  Problem p = make(1, 1, false);
  p.batch = int64_t{1} << 62;  // B*H*S*D would overflow int64_t
  EXPECT_NE(problem_error(p), "");
  p = make(int64_t{1} << 30, int64_t{1} << 30, true);  // Q and K/V fit, the 2^63 scores do not
  p.batch = p.heads = p.kv_heads = 1;
  p.head_dim = 1;
  EXPECT_NE(problem_error(p).find("score matrix"), std::string::npos);
  p = make(1, 1, false);
  p.head_dim = 0;
  EXPECT_NE(problem_error(p), "");
}

TEST(Problem, ShapeLabelNamesOnlyWhatDiffers) {
  EXPECT_EQ(make(1024, 1024, true).shape_label(), "B8 H16 S1024 D64");
  Problem p = make(17, 1000, true);
  p.kv_heads = 2;
  EXPECT_EQ(p.shape_label(), "B8 H16 Hkv2 S17 Skv1000 D64");
}

TEST(Problem, ParsesDtypes) {
  DType t{};
  EXPECT_TRUE(parse_dtype("fp16", t));
  EXPECT_EQ(t, DType::fp16);
  EXPECT_TRUE(parse_dtype("bf16", t));
  EXPECT_EQ(t, DType::bf16);
  EXPECT_FALSE(parse_dtype("float16", t));
}

}  // namespace
}  // namespace sdpa
