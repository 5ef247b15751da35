// The query-block grid of the fused kernels: one CTA per kBlockM query rows of one (batch, head).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "attention_shape.h"

namespace sdpa {

// CUDA's limit on grid y and z, where the heads and the batches run.
inline constexpr int64_t kMaxGridYZ = 65535;

// x walks the query blocks, y the heads, z the batches.
template <typename Traits>
dim3 query_block_grid(const AttentionShape& shape) {
  const int64_t m_blocks = (shape.seq_q + Traits::kBlockM - 1) / Traits::kBlockM;
  return dim3(static_cast<unsigned>(m_blocks), static_cast<unsigned>(shape.heads),
              static_cast<unsigned>(shape.batch));
}

}  // namespace sdpa
