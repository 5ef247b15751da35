#include "backends/cudnn/sdpa_graph.h"

#include <limits>
#include <optional>

#include <fmt/format.h>

namespace sdpa {

namespace cg = cudnn_graph;

cudnnDataType_t io_data_type(DType t) { return t == DType::bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF; }

float masked_score_value(std::size_t cudnn_version) {
  return cudnn_version < 91000 ? std::numeric_limits<float>::lowest()
                               : -std::numeric_limits<float>::infinity();
}

std::unique_ptr<cg::OperationGraph> build_sdpa_graph(const Problem& p, cudnnHandle_t handle) {
  const int64_t b = p.batch, h = p.heads, hk = p.kv_heads, sq = p.seq_q, skv = p.seq_kv,
                d = p.head_dim;
  const cudnnDataType_t io = io_data_type(p.dtype);
  const std::vector<int64_t> scores{b, h, sq, skv};
  const std::vector<int64_t> per_row{b, h, sq, 1};
  constexpr cudnnDataType_t f32 = CUDNN_DATA_FLOAT;

  auto graph = std::make_unique<cg::OperationGraph>();
  cg::OperationGraph& g = *graph;
  // A paged graph loads K and V from the pools where the contiguous one reads them.
  std::optional<PagedKvGraph> paged;
  if (p.paged()) paged.emplace(g, p);
  const auto& q = g.tensor(kUidQ, io, {b, h, sq, d});
  const auto& o = g.tensor(kUidO, io, {b, h, sq, d});
  const auto& stats = g.tensor(kUidStats, f32, per_row);
  const cg::Descriptor* masked = p.causal || paged ? &g.scalar(kUidNegInf) : nullptr;

  // Kᵀ read in place from K's [B, Hkv, Skv, D] memory; Hkv < Hq broadcasts over query-head groups.
  const auto& k_t = paged ? paged->load_k_transposed()
                          : g.tensor(kUidK, io, {b, hk, d, skv}, {hk * skv * d, skv * d, 1, d});
  const auto& s = g.matmul(q, k_t, g.virtual_tensor(f32, scores),
                           paged ? paged->scores_overrides() : cg::MatmulOverrides{});
  const cg::Descriptor* logits =
      &g.binary(CUDNN_POINTWISE_MUL, s, g.scalar(kUidScale), g.virtual_tensor(f32, scores));
  if (paged) logits = &paged->mask_padding(*logits, *masked);
  if (p.causal) {  // top-left aligned: query i sees keys j <= i
    const auto& row = g.gen_index(*logits, 2, g.virtual_tensor(CUDNN_DATA_INT32, scores));
    const auto& col = g.gen_index(*logits, 3, g.virtual_tensor(CUDNN_DATA_INT32, scores));
    const auto& visible =
        g.binary(CUDNN_POINTWISE_CMP_GE, row, col, g.virtual_tensor(CUDNN_DATA_BOOLEAN, scores),
                 CUDNN_DATA_BOOLEAN);
    logits = &g.select(*logits, *masked, visible, g.virtual_tensor(f32, scores));
  }
  const auto& row_max =
      g.reduction(CUDNN_REDUCE_TENSOR_MAX, *logits, g.virtual_tensor(f32, per_row));
  const auto& shifted =
      g.binary(CUDNN_POINTWISE_SUB, *logits, row_max, g.virtual_tensor(f32, scores));
  const auto& exps = g.unary(CUDNN_POINTWISE_EXP, shifted, g.virtual_tensor(f32, scores));
  const auto& row_sum = g.reduction(CUDNN_REDUCE_TENSOR_ADD, exps, g.virtual_tensor(f32, per_row));
  // The statistics branch: cuDNN's SDPA engines match the pattern only with it (seen with 9.14).
  g.binary(CUDNN_POINTWISE_ADD, row_max,
           g.unary(CUDNN_POINTWISE_LOG, row_sum, g.virtual_tensor(f32, per_row)), stats);
  // P in the input type: the second matmul's A operand must be the I/O type.
  const auto& probs = g.binary(CUDNN_POINTWISE_DIV, exps, row_sum, g.virtual_tensor(io, scores));
  const auto& v = paged ? paged->load_v() : g.tensor(kUidV, io, {b, hk, skv, d});
  g.matmul(probs, v, o, paged ? paged->output_overrides() : cg::MatmulOverrides{});
  g.finalize(handle);
  return graph;
}

std::vector<std::unique_ptr<SdpaPlan>> sdpa_plans(const Problem& p, cudnnHandle_t handle, PlanChoice choice) {
  return choose_plans([&] { return build_sdpa_graph(p, handle); }, handle, choice,
                      fmt::format("the SDPA forward of {}", p.shape_label()));
}

cg::Descriptor sdpa_variant_pack(const AttentionTensors& t, bool causal, const SdpaBuffers& buffers,
                                 const SdpaScalars& scalars) {
  // cuDNN's pointer array is not const: the inputs are only read.
  std::vector<int64_t> uids{kUidQ, kUidO, kUidStats, kUidScale};
  std::vector<void*> pointers{const_cast<void*>(t.q), t.o, buffers.stats,
                              const_cast<float*>(&scalars.scale)};
  if (t.paged != nullptr) {
    bind_paged_kv(*t.paged, buffers.lengths, uids, pointers);
  } else {
    uids.insert(uids.end(), {kUidK, kUidV});
    pointers.insert(pointers.end(), {const_cast<void*>(t.k), const_cast<void*>(t.v)});
  }
  if (causal || t.paged != nullptr) {  // the causal and the padding mask select it
    uids.push_back(kUidNegInf);
    pointers.push_back(const_cast<float*>(&scalars.masked));
  }
  return cg::variant_pack(uids, pointers, buffers.workspace);
}

}  // namespace sdpa
