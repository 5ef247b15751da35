// The query-block grid of the fused kernels, both sides of it: the grid the host launches (one
// CTA per kBlockM query rows of one (batch, head)) and what one CTA of it works on.
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

// One CTA's share of the problem, for Traits::kHeadDim, kBlockM query rows and key blocks of
// kBlockN. Read it with a structured binding: auto [seq_q, seq_kv, m0, ...] = QueryBlock<...>(p).
template <typename Traits, bool kCausal>
struct QueryBlock {
  int seq_q;
  int seq_kv;
  int m0;             // the block's first query row
  int64_t q_offset;   // of row m0 of this (batch, head) in Q and O
  int64_t kv_offset;  // of key 0 of the key/value head in K and V (same shape)
  int n_blocks;       // key blocks to visit: causal blocks stop at the block's last row
  float scale_log2;   // the softmax scale for exp2

  __device__ __forceinline__ explicit QueryBlock(const AttentionShape& p) {
    // Heaviest causal blocks first: the grid runs them before the light ones.
    const int m_block = static_cast<int>(gridDim.x - 1 - blockIdx.x);
    const int head = static_cast<int>(blockIdx.y);
    const int batch = static_cast<int>(blockIdx.z);
    seq_q = static_cast<int>(p.seq_q);
    seq_kv = static_cast<int>(p.seq_kv);
    const int64_t kv_head = head / (p.heads / p.kv_heads);
    scale_log2 = p.scale * 1.4426950408889634f;
    m0 = m_block * Traits::kBlockM;
    q_offset = ((batch * p.heads + head) * p.seq_q + m0) * Traits::kHeadDim;
    kv_offset = (batch * p.kv_heads + kv_head) * p.seq_kv * Traits::kHeadDim;
    const int kv_end = kCausal ? min(seq_kv, m0 + Traits::kBlockM) : seq_kv;
    n_blocks = (kv_end + Traits::kBlockN - 1) / Traits::kBlockN;
  }
};

}  // namespace sdpa
