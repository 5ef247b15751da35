// The paged KV cache in the SDPA forward graph: K and V gathered from our page pools by cuDNN's
// paged cache load (one operation per pool, both through the one block table), and what cuDNN asks
// for beside it: per-sequence lengths, the padding mask they drive and the matmuls' size overrides.
// The layout is kernels/paged_kv.h's, handed to cuDNN as it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cudnn/graph.h"
#include "model/problem.h"
#include "paged_kv.h"

namespace sdpa {

// Unique ids of a paged graph's non-virtual tensors besides the forward's kUidQ ... kUidNegInf (a
// paged graph binds no kUidK or kUidV: K and V are virtual, loaded from the pools).
enum PagedKvTensorUid : int64_t {
  kUidKPool = 20,       // [pool pages, Hkv, page_size, D] of the I/O type
  kUidVPool = 21,       // the same for V
  kUidBlockTable = 22,  // int32 [B, 1, pages per sequence, 1], in pages; K and V share it
  kUidSeqLenQ = 23,     // int32 [B, 1, 1, 1]: each sequence's queries (Sq)
  kUidSeqLenKv = 24,    // int32 [B, 1, 1, 1]: each sequence's keys (Skv)
};

// The first cuDNN with the paged cache load (cudnn-frontend 1.8's release notes and its support
// surface), and the first whose paged attention takes head dims above 128.
inline constexpr std::size_t kCudnnPagedKv = 90500;
inline constexpr std::size_t kCudnnPagedKvLargeHeads = 91000;

// Why cuDNN `cudnn_version` cannot run the paged problem `p` through this graph, nullopt when it
// can (or `p` is contiguous).
std::optional<std::string> paged_kv_cudnn_unsupported(const Problem& p, std::size_t cudnn_version);

// The per-sequence lengths a paged graph reads, in device memory: int32 [B] each.
struct SequenceLengths {
  const int32_t* q = nullptr;
  const int32_t* kv = nullptr;
};

// What a paged SDPA graph adds to `g`, in the order cudnn-frontend's composite SDPA node lays it
// out: the real tensors at construction, each operation when the forward reaches its place.
class PagedKvGraph {
 public:
  PagedKvGraph(cudnn_graph::OperationGraph& g, const Problem& p);

  // Kᵀ [B, Hkv, D, Skv] (strides swapped over [B, Hkv, Skv, D]), virtual, loaded from the K pool.
  const cudnn_graph::Descriptor& load_k_transposed();
  // V [B, Hkv, Skv, D], virtual, loaded from the V pool.
  const cudnn_graph::Descriptor& load_v();
  // `scores` where row < Sq and column < Skv of the sequence, else `masked`.
  const cudnn_graph::Descriptor& mask_padding(const cudnn_graph::Descriptor& scores,
                                              const cudnn_graph::Descriptor& masked);
  // Q·Kᵀ: M and N from the sequence lengths; P·V: M and K.
  cudnn_graph::MatmulOverrides scores_overrides() const {
    return {seq_len_q_, seq_len_kv_, nullptr};
  }
  cudnn_graph::MatmulOverrides output_overrides() const {
    return {seq_len_q_, nullptr, seq_len_kv_};
  }

 private:
  cudnn_graph::OperationGraph& g_;
  int64_t batch_, kv_heads_, seq_kv_, head_dim_;
  std::vector<int64_t> scores_dims_;  // [B, Hq, Sq, Skv]
  cudnnDataType_t io_;
  const cudnn_graph::Descriptor* k_pool_;
  const cudnn_graph::Descriptor* v_pool_;
  const cudnn_graph::Descriptor* block_table_;
  const cudnn_graph::Descriptor* seq_len_q_;
  const cudnn_graph::Descriptor* seq_len_kv_;
};

// Appends the paged graph's bindings (pools, block table, lengths) to a variant pack's lists.
void bind_paged_kv(const PagedKv& pages, const SequenceLengths& lengths, std::vector<int64_t>& uids,
                   std::vector<void*>& pointers);

}  // namespace sdpa
