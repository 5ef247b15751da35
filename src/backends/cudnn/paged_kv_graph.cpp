#include "backends/cudnn/paged_kv_graph.h"

#include <limits>

#include <fmt/format.h>

#include "backends/cudnn/cudnn_library.h"
#include "backends/cudnn/sdpa_graph.h"
#include "gpu/problem_shape.h"

namespace sdpa {

namespace cg = cudnn_graph;

std::optional<std::string> paged_kv_cudnn_unsupported(const Problem& p, std::size_t cudnn_version) {
  if (!p.paged()) return std::nullopt;
  if (p.has_backward())
    return "cuDNN's paged K/V graph is a forward: its backward would write dK and dV into pages";
  if (p.seq_kv > std::numeric_limits<int32_t>::max())
    return fmt::format("Skv {}: cuDNN's sequence lengths are int32", p.seq_kv);
  if (cudnn_version < kCudnnPagedKv)
    return fmt::format("paged K/V needs cuDNN {} or newer, loaded {}",
                       cudnn_version_text(kCudnnPagedKv), cudnn_version_text(cudnn_version));
  if (p.head_dim > 128 && cudnn_version < kCudnnPagedKvLargeHeads)
    return fmt::format("paged K/V at head dim {} (above 128) needs cuDNN {} or newer, loaded {}",
                       p.head_dim, cudnn_version_text(kCudnnPagedKvLargeHeads),
                       cudnn_version_text(cudnn_version));
  return std::nullopt;
}

PagedKvGraph::PagedKvGraph(cg::OperationGraph& g, const Problem& p)
    : g_(g),
      batch_(p.batch),
      kv_heads_(p.kv_heads),
      seq_kv_(p.seq_kv),
      head_dim_(p.head_dim),
      scores_dims_{p.batch, p.heads, p.seq_q, p.seq_kv},
      io_(io_data_type(p.dtype)) {
  const PagedKvLayout l = paged_kv_layout(attention_shape(p), p.page_size);
  // Our pool page [Hkv, page_size, D] is cuDNN's container element [page, h, s mod page_size, d].
  const std::vector<int64_t> pool_dims{l.pool_pages, kv_heads_, l.page_size, head_dim_};
  const std::vector<int64_t> pool_strides{l.page_stride, l.head_stride, l.row_stride, 1};
  k_pool_ = &g.tensor(kUidKPool, io_, pool_dims, pool_strides);
  v_pool_ = &g.tensor(kUidVPool, io_, pool_dims, pool_strides);
  // Our block table [B, P] read as [B, 1, P, 1].
  const int64_t pages = l.pages_per_sequence;
  block_table_ =
      &g.tensor(kUidBlockTable, CUDNN_DATA_INT32, {batch_, 1, pages, 1}, {pages, pages, 1, 1});
  seq_len_q_ = &g.tensor(kUidSeqLenQ, CUDNN_DATA_INT32, {batch_, 1, 1, 1});
  seq_len_kv_ = &g.tensor(kUidSeqLenKv, CUDNN_DATA_INT32, {batch_, 1, 1, 1});
}

const cg::Descriptor& PagedKvGraph::load_k_transposed() {
  // cuDNN tells the K load from the V load by the output's strides: stride[2] == 1 is Kᵀ.
  const int64_t h = kv_heads_, s = seq_kv_, d = head_dim_;
  return g_.paged_cache_load(*k_pool_, *block_table_, *seq_len_kv_,
                             g_.virtual_tensor(io_, {batch_, h, d, s}, {h * d * s, d * s, 1, d}));
}

const cg::Descriptor& PagedKvGraph::load_v() {
  return g_.paged_cache_load(*v_pool_, *block_table_, *seq_len_kv_,
                             g_.virtual_tensor(io_, {batch_, kv_heads_, seq_kv_, head_dim_}));
}

const cg::Descriptor& PagedKvGraph::mask_padding(const cg::Descriptor& scores,
                                                 const cg::Descriptor& masked) {
  const auto& row = g_.gen_index(scores, 2, g_.virtual_tensor(CUDNN_DATA_INT32, scores_dims_));
  const auto& col = g_.gen_index(scores, 3, g_.virtual_tensor(CUDNN_DATA_INT32, scores_dims_));
  const auto& row_in =
      g_.binary(CUDNN_POINTWISE_CMP_LT, row, *seq_len_q_,
                g_.virtual_tensor(CUDNN_DATA_BOOLEAN, scores_dims_), CUDNN_DATA_BOOLEAN);
  const auto& col_in =
      g_.binary(CUDNN_POINTWISE_CMP_LT, col, *seq_len_kv_,
                g_.virtual_tensor(CUDNN_DATA_BOOLEAN, scores_dims_), CUDNN_DATA_BOOLEAN);
  const auto& inside =
      g_.binary(CUDNN_POINTWISE_LOGICAL_AND, row_in, col_in,
                g_.virtual_tensor(CUDNN_DATA_BOOLEAN, scores_dims_), CUDNN_DATA_BOOLEAN);
  return g_.select(scores, masked, inside, g_.virtual_tensor(CUDNN_DATA_FLOAT, scores_dims_));
}

void bind_paged_kv(const PagedKv& pages, const SequenceLengths& lengths, std::vector<int64_t>& uids,
                   std::vector<void*>& pointers) {
  // cuDNN's pointer array is not const: these are only read.
  uids.insert(uids.end(), {kUidKPool, kUidVPool, kUidBlockTable, kUidSeqLenQ, kUidSeqLenKv});
  pointers.insert(pointers.end(),
                  {const_cast<void*>(pages.k_pool), const_cast<void*>(pages.v_pool),
                   const_cast<int32_t*>(pages.block_table), const_cast<int32_t*>(lengths.q),
                   const_cast<int32_t*>(lengths.kv)});
}

}  // namespace sdpa
