// Plain sizes of one attention problem, as device code sees them. Layouts are [B, H, S, D]
// row-major for Q, K, V and O; a query head h reads key/value head h / (Hq / Hkv).
#pragma once

#include <cstdint>

namespace sdpa {

struct AttentionShape {
  int64_t batch;
  int64_t heads;
  int64_t kv_heads;
  int64_t seq_q;
  int64_t seq_kv;
  int64_t head_dim;
  bool causal;
  float scale;
};

}  // namespace sdpa
