#include "gpu/problem_shape.h"

namespace sdpa {

AttentionShape attention_shape(const Problem& p) {
  return AttentionShape{.batch = p.batch,
                        .heads = p.heads,
                        .kv_heads = p.kv_heads,
                        .seq_q = p.seq_q,
                        .seq_kv = p.seq_kv,
                        .head_dim = p.head_dim,
                        .causal = p.causal,
                        .scale = static_cast<float>(p.softmax_scale())};
}

}  // namespace sdpa
