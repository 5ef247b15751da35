// The case-range grammar (model/range_name.h): what our profile pass and torch_sdpa.py write is
// what trace reads back, and nothing else is a case.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "model/range_name.h"

namespace sdpa {
namespace {

Problem study_shape() {
  Problem p;
  p.batch = 8;
  p.heads = 16;
  p.kv_heads = 16;
  p.seq_q = 1024;
  p.seq_kv = 1024;
  p.head_dim = 64;
  p.causal = true;
  return p;
}

TEST(RangeName, WritesTheDocumentedForm) {
  EXPECT_EQ(forward_range_name("naive", study_shape(), 2),
            "sdpa-prof/naive/B8_H16_S1024_D64_bf16_causal/fwd2");
  Problem gqa = study_shape();
  gqa.kv_heads = 4;
  gqa.seq_kv = 4096;
  gqa.causal = false;
  gqa.dtype = DType::fp16;
  EXPECT_EQ(range_prefix("torch:flash", gqa),
            "sdpa-prof/torch:flash/B8_H16_Hkv4_S1024_Skv4096_D64_fp16");
}

TEST(RangeName, RoundTripsEveryOptionalField) {
  for (const int kv_heads : {16, 2})
    for (const int64_t seq_kv : {1024, 77})
      for (const bool causal : {true, false})
        for (const DType dtype : {DType::bf16, DType::fp16})
          for (const std::string& backend :
               std::vector<std::string>{"naive-inplace", "cudnn[eng2.cfg32]", "torch:math"}) {
            Problem p = study_shape();
            p.kv_heads = kv_heads;
            p.seq_kv = seq_kv;
            p.causal = causal;
            p.dtype = dtype;
            const std::string name = forward_range_name(backend, p, 13);
            const std::optional<ForwardRange> r = parse_forward_range(name);
            ASSERT_TRUE(r.has_value()) << name;
            EXPECT_EQ(r->backend, backend);
            EXPECT_EQ(r->forward, 13);
            EXPECT_EQ(r->prefix, range_prefix(backend, p));
            EXPECT_EQ(forward_range_name(r->backend, r->problem, r->forward), name);
          }
}

// The pass is a field after every other, left out for the forward (names from before the axis).
TEST(RangeName, APassOtherThanTheForwardIsAField) {
  Problem p = study_shape();
  p.pass = AttentionPass::backward;
  EXPECT_EQ(range_problem(p), "B8_H16_S1024_D64_bf16_causal_bwd");
  p.pass = AttentionPass::forward_backward;
  const std::string name = forward_range_name("flash", p, 1);
  EXPECT_EQ(name, "sdpa-prof/flash/B8_H16_S1024_D64_bf16_causal_fwd+bwd/fwd1");
  const std::optional<ForwardRange> r = parse_forward_range(name);
  ASSERT_TRUE(r.has_value()) << name;
  EXPECT_EQ(r->problem.pass, AttentionPass::forward_backward);
  EXPECT_FALSE(parse_forward_range("sdpa-prof/flash/B8_H16_S1024_D64_bf16_causal_fwd/fwd1").has_value())
      << "the forward is spelled by leaving the field out";
  EXPECT_FALSE(parse_forward_range("sdpa-prof/flash/B8_H16_S1024_D64_bf16_bwd_causal/fwd1").has_value());
}

// A graph launch is the last field, after the pass; eager (every name from before the axis) is
// the launch a name without one means.
TEST(RangeName, AGraphLaunchIsTheLastField) {
  Problem p = study_shape();
  p.launch = LaunchMode::graph;
  EXPECT_EQ(range_problem(p), "B8_H16_S1024_D64_bf16_causal_graph");
  p.pass = AttentionPass::forward_backward;
  const std::string name = forward_range_name("torch:cudnn", p, 2);
  EXPECT_EQ(name, "sdpa-prof/torch:cudnn/B8_H16_S1024_D64_bf16_causal_fwd+bwd_graph/fwd2");
  const std::optional<ForwardRange> r = parse_forward_range(name);
  ASSERT_TRUE(r.has_value()) << name;
  EXPECT_EQ(r->problem.launch, LaunchMode::graph);
  EXPECT_EQ(r->problem.pass, AttentionPass::forward_backward);
  const std::optional<ForwardRange> old = parse_forward_range("sdpa-prof/flash/B8_H16_S1024_D64_bf16_causal/fwd0");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->problem.launch, LaunchMode::eager);
  EXPECT_FALSE(parse_forward_range("sdpa-prof/flash/B8_H16_S1024_D64_bf16_causal_eager/fwd0").has_value())
      << "eager is spelled by leaving the field out";
  EXPECT_FALSE(parse_forward_range("sdpa-prof/flash/B8_H16_S1024_D64_bf16_causal_graph_bwd/fwd0").has_value())
      << "out of order";
}

// The softmax scale, an identity axis, is a field of its own when it is not the default.
TEST(RangeName, AnExplicitScaleIsAField) {
  Problem p = study_shape();
  EXPECT_EQ(range_problem(p), "B8_H16_S1024_D64_bf16_causal");
  for (const double scale : {0.125, 0.3, 1e-05, 2.0}) {
    p.scale = scale;
    const std::string name = forward_range_name("flash", p, 0);
    EXPECT_EQ(name, fmt::format("sdpa-prof/flash/B8_H16_S1024_D64_bf16_causal_scale{}/fwd0", scale));
    const std::optional<ForwardRange> r = parse_forward_range(name);
    ASSERT_TRUE(r.has_value()) << name;
    EXPECT_EQ(r->problem.scale, scale);
  }
  const std::optional<ForwardRange> plain = parse_forward_range("sdpa-prof/flash/B8_H16_S1024_D64_bf16/fwd0");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->problem.scale, 0.0) << "no field: the default scale";
}

// share/sdpa-prof/range_label.py, which torch_sdpa.py names its ranges with, writes what the C++
// writer writes (python3 is in CI and on the GPU machine).
TEST(RangeName, TheTorchScriptsLabelsAreTheWritersOwn) {
  const std::vector<std::pair<Problem, const char*>> problems = [] {
    std::vector<std::pair<Problem, const char*>> out;
    for (const AttentionPass pass : {AttentionPass::backward, AttentionPass::forward_backward}) {
      Problem p = study_shape();
      p.pass = pass;
      out.emplace_back(p, "");
    }
    Problem p = study_shape();
    out.emplace_back(p, "");
    p.launch = LaunchMode::graph;
    out.emplace_back(p, "");
    p.pass = AttentionPass::forward_backward;
    out.emplace_back(p, "");
    p.pass = AttentionPass::forward;
    p.launch = LaunchMode::eager;
    p.kv_heads = 2;
    p.seq_kv = 4097;
    p.causal = false;
    p.dtype = DType::fp16;
    out.emplace_back(p, "");
    p.scale = 0.0883883476483184;
    out.emplace_back(p, "0.0883883476483184");
    p.scale = 1e-05;
    out.emplace_back(p, "1e-05");
    return out;
  }();
  for (const auto& [p, scale] : problems) {
    const std::string command = fmt::format(
        "python3 {}/share/sdpa-prof/range_label.py {} {} {} {} {} {} {} {} '{}' '{}' '{}'", SDPA_SOURCE_DIR, p.batch,
        p.heads, p.kv_heads, p.seq_q, p.seq_kv, p.head_dim, dtype_name(p.dtype), p.causal ? "causal" : "full", scale,
        pass_name(p.pass), launch_name(p.launch));
    struct Close {
      void operator()(FILE* f) const { pclose(f); }
    };
    std::unique_ptr<FILE, Close> pipe(popen(command.c_str(), "r"));
    ASSERT_NE(pipe, nullptr);
    std::array<char, 256> line{};
    ASSERT_NE(fgets(line.data(), line.size(), pipe.get()), nullptr) << command;
    std::string label = line.data();
    if (!label.empty() && label.back() == '\n') label.pop_back();
    EXPECT_EQ(label, range_problem(p)) << command;
  }
}

TEST(RangeName, OtherNamesAreOrdinaryRanges) {
  for (const char* name : {
           "",
           "sdpa-prof",
           "sdpa-prof/naive",
           "sdpa-prof/naive/B8_H16_S1024_D64_bf16_causal",  // no forward
           "sdpa-prof/naive/B8_H16_S1024_D64_bf16_causal/fwd",
           "sdpa-prof/naive/B8_H16_S1024_D64_bf16_causal/fwd01",
           "sdpa-prof/naive/B8_H16_S1024_D64_bf16_causal/fwd-1",
           "sdpa-prof/naive/B8_H16_S1024_D64_bf16_causal/fwd2/x",
           "sdpa-prof/naive/B8_H16_S1024_D64_bf16_causal/fwd99999999999999999999",
           "sdpa-prof//B8_H16_S1024_D64_bf16/fwd0",      // no backend
           "sdpa-prof/a b/B8_H16_S1024_D64_bf16/fwd0",   // a space in the backend
           "sdpa-prof/naive/B8_H16_S1024_bf16/fwd0",     // no head dim
           "sdpa-prof/naive/B8_H16_S1024_D64/fwd0",      // no dtype
           "sdpa-prof/naive/B8_H16_S1024_D64_fp8/fwd0",  // unknown dtype
           "sdpa-prof/naive/B8_H16_S1024_D64_bf16_causal_x/fwd0",
           "sdpa-prof/naive/B0_H16_S1024_D64_bf16/fwd0",        // a size of 0
           "sdpa-prof/naive/B08_H16_S1024_D64_bf16/fwd0",       // a leading zero
           "sdpa-prof/naive/B8_H16_Hkv16_S1024_D64_bf16/fwd0",  // the default spelled out
           "sdpa-prof/naive/B8_H16_Hkv3_S1024_D64_bf16/fwd0",   // 3 does not divide 16
           "sdpa-prof/naive/B99999999999999999999_H16_S1024_D64_bf16/fwd0",
           "sdpa-prof/naive/B1099511627776_H1099511627776_S1024_D64_bf16/fwd0",  // too many
                                                                                 // elements
           "sdpa-prof/naive/B8_H16_S1024_D64_bf16_scale0.1250/fwd0",  // not the number's one spelling
           "sdpa-prof/naive/B8_H16_S1024_D64_bf16_scale-1/fwd0",
           "sdpa-prof/naive/B8_H16_S1024_D64_bf16_scale0.125_causal/fwd0",  // out of order
           "aten::_safe_softmax, op_id = 48",
           "torch_sdpa timing torch:flash",
       })
    EXPECT_FALSE(parse_forward_range(name).has_value()) << name;
}

}  // namespace
}  // namespace sdpa
