#include "run/reference_cpu.h"

#include <algorithm>
#include <cmath>

namespace sdpa {

namespace {

// The probabilities of query row i of head (b, h) over its visible keys, in `probs`.
void probability_row(const Problem& p, const float* qi, const float* kh, int64_t visible,
                     std::vector<double>& probs) {
  const int64_t D = p.head_dim;
  double row_max = -INFINITY;
  for (int64_t j = 0; j < visible; ++j) {
    double dot = 0;
    for (int64_t d = 0; d < D; ++d) dot += static_cast<double>(qi[d]) * kh[j * D + d];
    probs[j] = dot * p.softmax_scale();
    row_max = std::max(row_max, probs[j]);
  }
  double sum = 0;
  for (int64_t j = 0; j < visible; ++j) sum += (probs[j] = std::exp(probs[j] - row_max));
  for (int64_t j = 0; j < visible; ++j) probs[j] /= sum;
}

int64_t visible_keys(const Problem& p, int64_t i) { return p.causal ? std::min(i + 1, p.seq_kv) : p.seq_kv; }

}  // namespace

std::vector<double> reference_attention_cpu(const Problem& p, const std::vector<float>& q,
                                            const std::vector<float>& k, const std::vector<float>& v) {
  const int64_t D = p.head_dim;
  std::vector<double> out(static_cast<std::size_t>(p.q_elements()));
  std::vector<double> scores(static_cast<std::size_t>(p.seq_kv));
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h) {
      const int64_t kvh = h / p.group_size();
      const float* kh = k.data() + (b * p.kv_heads + kvh) * p.seq_kv * D;
      const float* vh = v.data() + (b * p.kv_heads + kvh) * p.seq_kv * D;
      for (int64_t i = 0; i < p.seq_q; ++i) {
        const float* qi = q.data() + ((b * p.heads + h) * p.seq_q + i) * D;
        const int64_t visible = visible_keys(p, i);
        probability_row(p, qi, kh, visible, scores);
        double* oi = out.data() + ((b * p.heads + h) * p.seq_q + i) * D;
        for (int64_t j = 0; j < visible; ++j)
          for (int64_t d = 0; d < D; ++d) oi[d] += scores[j] * vh[j * D + d];
      }
    }
  return out;
}

Gradients reference_attention_backward_cpu(const Problem& p, const std::vector<float>& q,
                                           const std::vector<float>& k, const std::vector<float>& v,
                                           const std::vector<float>& d_out) {
  const int64_t D = p.head_dim;
  const double scale = p.softmax_scale();
  Gradients g{std::vector<double>(q.size()), std::vector<double>(k.size()), std::vector<double>(v.size())};
  std::vector<double> probs(static_cast<std::size_t>(p.seq_kv));
  std::vector<double> d_probs(static_cast<std::size_t>(p.seq_kv));
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h) {
      const int64_t kv_at = (b * p.kv_heads + h / p.group_size()) * p.seq_kv * D;
      const float* kh = k.data() + kv_at;
      const float* vh = v.data() + kv_at;
      for (int64_t i = 0; i < p.seq_q; ++i) {
        const int64_t row_at = ((b * p.heads + h) * p.seq_q + i) * D;
        const float* qi = q.data() + row_at;
        const float* doi = d_out.data() + row_at;
        const int64_t visible = visible_keys(p, i);
        probability_row(p, qi, kh, visible, probs);
        // rowsum(dO * O) = sum_j P_j (dO . V_j)
        double delta = 0;
        for (int64_t j = 0; j < visible; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += static_cast<double>(doi[d]) * vh[j * D + d];
          d_probs[j] = dot;
          delta += probs[j] * dot;
        }
        for (int64_t j = 0; j < visible; ++j) {
          const double d_score = probs[j] * (d_probs[j] - delta);
          for (int64_t d = 0; d < D; ++d) {
            g.dq[row_at + d] += scale * d_score * kh[j * D + d];
            g.dk[kv_at + j * D + d] += scale * d_score * qi[d];
            g.dv[kv_at + j * D + d] += probs[j] * doi[d];
          }
        }
      }
    }
  return g;
}

}  // namespace sdpa
