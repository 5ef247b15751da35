// The case-range grammar (model/range_name.h): what our profile pass and torch_sdpa.py write is
// what trace reads back, and nothing else is a case.
#include <gtest/gtest.h>

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
           "aten::_safe_softmax, op_id = 48",
           "torch_sdpa timing torch:flash",
       })
    EXPECT_FALSE(parse_forward_range(name).has_value()) << name;
}

}  // namespace
}  // namespace sdpa
