#include "run/reference_cpu.h"

#include <algorithm>
#include <cmath>

namespace sdpa {

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
        const int64_t visible = p.causal ? std::min(i + 1, p.seq_kv) : p.seq_kv;
        double row_max = -INFINITY;
        for (int64_t j = 0; j < visible; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += static_cast<double>(qi[d]) * kh[j * D + d];
          scores[j] = dot * p.softmax_scale();
          row_max = std::max(row_max, scores[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < visible; ++j) sum += (scores[j] = std::exp(scores[j] - row_max));
        double* oi = out.data() + ((b * p.heads + h) * p.seq_q + i) * D;
        for (int64_t j = 0; j < visible; ++j)
          for (int64_t d = 0; d < D; ++d) oi[d] += scores[j] / sum * vh[j * D + d];
      }
    }
  return out;
}

}  // namespace sdpa
