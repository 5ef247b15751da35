// The fp64 CPU backward (run/reference_cpu.h), which the GPU reference backward is checked
// against, checked itself against central differences of the CPU forward.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "run/reference_cpu.h"

namespace sdpa {
namespace {

std::vector<float> normal_values(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist;
  std::vector<float> out(n);
  for (float& x : out) x = dist(rng);
  return out;
}

// sum(O * d_out): its gradient is what the backward computes for the upstream gradient d_out.
double loss(const Problem& p, const std::vector<float>& q, const std::vector<float>& k,
            const std::vector<float>& v, const std::vector<float>& d_out) {
  const std::vector<double> o = reference_attention_cpu(p, q, k, v);
  double sum = 0;
  for (std::size_t i = 0; i < o.size(); ++i) sum += o[i] * d_out[i];
  return sum;
}

// The central difference of the loss in element `at` of `x` (one of q, k, v, by reference).
double numeric_gradient(const Problem& p, std::vector<float>& x, std::size_t at, const std::vector<float>& q,
                        const std::vector<float>& k, const std::vector<float>& v, const std::vector<float>& d_out) {
  const float kept = x[at];
  const float up = kept + 1e-2f;
  const float down = kept - 1e-2f;
  x[at] = up;
  const double l_up = loss(p, q, k, v, d_out);
  x[at] = down;
  const double l_down = loss(p, q, k, v, d_out);
  x[at] = kept;
  return (l_up - l_down) / (static_cast<double>(up) - static_cast<double>(down));
}

void expect_gradients_match(const Problem& p) {
  std::mt19937 rng(1234);
  std::vector<float> q = normal_values(static_cast<std::size_t>(p.q_elements()), rng);
  std::vector<float> k = normal_values(static_cast<std::size_t>(p.kv_elements()), rng);
  std::vector<float> v = normal_values(static_cast<std::size_t>(p.kv_elements()), rng);
  const std::vector<float> d_out = normal_values(q.size(), rng);
  const Gradients g = reference_attention_backward_cpu(p, q, k, v, d_out);
  ASSERT_EQ(g.dq.size(), q.size());
  ASSERT_EQ(g.dk.size(), k.size());
  ASSERT_EQ(g.dv.size(), v.size());
  // Central differences err by O(h^2) times the third derivative; 1e-3 absolute is far above
  // that at h = 0.01 and far below a wrong term (every gradient here is of order 0.1 to 1).
  for (std::size_t i = 0; i < q.size(); ++i)
    EXPECT_NEAR(g.dq[i], numeric_gradient(p, q, i, q, k, v, d_out), 1e-3) << "dq[" << i << "]";
  for (std::size_t i = 0; i < k.size(); ++i)
    EXPECT_NEAR(g.dk[i], numeric_gradient(p, k, i, q, k, v, d_out), 1e-3) << "dk[" << i << "]";
  for (std::size_t i = 0; i < v.size(); ++i)
    EXPECT_NEAR(g.dv[i], numeric_gradient(p, v, i, q, k, v, d_out), 1e-3) << "dv[" << i << "]";
}

Problem small(int64_t sq, int64_t skv, bool causal) {
  Problem p;
  p.batch = 2;
  p.heads = 4;
  p.kv_heads = 2;  // dK and dV sum over the two query heads of each group
  p.seq_q = sq;
  p.seq_kv = skv;
  p.head_dim = 3;
  p.causal = causal;
  return p;
}

TEST(ReferenceBackward, EqualsCentralDifferences) { expect_gradients_match(small(5, 5, false)); }
TEST(ReferenceBackward, EqualsCentralDifferencesCausal) { expect_gradients_match(small(5, 5, true)); }
// Top-left causal with fewer keys than queries (later rows see every key) and with more.
TEST(ReferenceBackward, EqualsCentralDifferencesCausalUnequalLengths) {
  expect_gradients_match(small(6, 3, true));
  expect_gradients_match(small(3, 6, true));
}
TEST(ReferenceBackward, EqualsCentralDifferencesOneQuery) { expect_gradients_match(small(1, 7, false)); }

TEST(ReferenceBackward, KeysNoQuerySeesGetNoGradient) {
  Problem p = small(2, 5, true);  // rows 0 and 1 see keys 0 and 0..1 only
  std::mt19937 rng(7);
  const std::vector<float> q = normal_values(static_cast<std::size_t>(p.q_elements()), rng);
  const std::vector<float> k = normal_values(static_cast<std::size_t>(p.kv_elements()), rng);
  const std::vector<float> v = normal_values(static_cast<std::size_t>(p.kv_elements()), rng);
  const std::vector<float> d_out = normal_values(q.size(), rng);
  const Gradients g = reference_attention_backward_cpu(p, q, k, v, d_out);
  for (int64_t bh = 0; bh < p.batch * p.kv_heads; ++bh)
    for (int64_t j = 2; j < p.seq_kv; ++j)
      for (int64_t d = 0; d < p.head_dim; ++d) {
        const std::size_t at = static_cast<std::size_t>((bh * p.seq_kv + j) * p.head_dim + d);
        EXPECT_EQ(g.dk[at], 0.0);
        EXPECT_EQ(g.dv[at], 0.0);
      }
}

}  // namespace
}  // namespace sdpa
