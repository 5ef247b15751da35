#include "backends/cudnn/sdpa_backward_graph.h"

#include <fmt/format.h>

#include "backends/cudnn/sdpa_graph.h"

namespace sdpa {

namespace cg = cudnn_graph;

std::optional<std::string> sdpa_backward_unsupported(const Problem& p, std::size_t cudnn_version) {
  if (p.seq_q == 1 && p.seq_kv == 1) return "cuDNN's fused backward does not take Sq = Skv = 1";
  if (cudnn_version == 91000 || cudnn_version == 91001)
    return fmt::format("cuDNN {}'s fused backward has known bugs (9.10.2 fixed them)",
                       cudnn_version);
  return std::nullopt;
}

bool dq_accum_needs_zeroing(std::size_t cudnn_version) {
  return cudnn_version < 90600;
}

std::size_t sdpa_backward_buffer_bytes(const Problem& p) {
  const auto rows = static_cast<std::size_t>(p.batch * p.heads * p.seq_q);
  return rows * sizeof(float) + rows * static_cast<std::size_t>(p.head_dim) * sizeof(float);
}

std::unique_ptr<cg::OperationGraph> build_sdpa_backward_graph(const Problem& p,
                                                              cudnnHandle_t handle) {
  const int64_t b = p.batch, h = p.heads, hk = p.kv_heads, sq = p.seq_q, skv = p.seq_kv,
                d = p.head_dim;
  const cudnnDataType_t io = io_data_type(p.dtype);
  constexpr cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
  const std::vector<int64_t> scores{b, h, sq, skv};
  const std::vector<int64_t> per_row{b, h, sq, 1};
  const std::vector<int64_t> rows{b, h, sq, d};
  const std::vector<int64_t> full_head_grad{b, h, skv, d};  // dK or dV of each query head
  // Scores transposed in place: [B, Hq, Skv, Sq] over [B, Hq, Sq, Skv] memory.
  const std::vector<int64_t> transposed_dims{b, h, skv, sq};
  const std::vector<int64_t> transposed_strides{h * sq * skv, sq * skv, 1, skv};
  // Kᵀ and Vᵀ read in place from [B, Hkv, Skv, D] memory, as the forward reads Kᵀ.
  const std::vector<int64_t> kv_t_dims{b, hk, d, skv};
  const std::vector<int64_t> kv_t_strides{hk * skv * d, skv * d, 1, d};

  auto graph = std::make_unique<cg::OperationGraph>();
  cg::OperationGraph& g = *graph;
  const auto& q = g.tensor(kUidQ, io, rows);
  const auto& k_t = g.tensor(kUidK, io, kv_t_dims, kv_t_strides);
  const auto& v_t = g.tensor(kUidV, io, kv_t_dims, kv_t_strides);
  const auto& o = g.tensor(kUidO, io, rows);
  const auto& d_out = g.tensor(kUidDOut, io, rows);
  const auto& stats = g.tensor(kUidStats, f32, per_row);
  const auto& dq = g.tensor(kUidDQ, io, rows);
  const auto& dk = g.tensor(kUidDK, io, {b, hk, skv, d});
  const auto& dv = g.tensor(kUidDV, io, {b, hk, skv, d});
  const auto& scale = g.scalar(kUidScale);

  // Each query head's dK or dV straight into `out`, or (grouped heads) summed over the group.
  const auto head_grad = [&](const cg::Descriptor& a, const cg::Descriptor& b_operand,
                             const cg::Descriptor& out) {
    if (h == hk) {
      g.matmul(a, b_operand, out);
      return;
    }
    g.reduction(CUDNN_REDUCE_TENSOR_ADD,
                g.matmul(a, b_operand, g.virtual_tensor(io, full_head_grad)), out);
  };

  // rowsum(dO ∘ O), times the dropout scale's place (1): a real tensor, as cudnn-frontend binds it.
  const auto& row_dot = g.tensor(kUidRowDot, f32, per_row);
  const auto& d_out_o = g.binary(CUDNN_POINTWISE_MUL, d_out, o, g.virtual_tensor(f32, rows));
  g.binary(CUDNN_POINTWISE_MUL,
           g.reduction(CUDNN_REDUCE_TENSOR_ADD, d_out_o, g.virtual_tensor(f32, per_row)),
           g.scalar(kUidOne), row_dot);

  // P recomputed from the statistics: exp(Q·Kᵀ × scale − Stats), masked after the subtraction.
  const auto& s = g.matmul(q, k_t, g.virtual_tensor(f32, scores));
  const auto& logits = g.binary(CUDNN_POINTWISE_MUL, s, scale, g.virtual_tensor(f32, scores));
  const cg::Descriptor* shifted =
      &g.binary(CUDNN_POINTWISE_SUB, logits, stats, g.virtual_tensor(f32, scores));
  if (p.causal) {  // top-left aligned, as the forward: query i sees keys j <= i
    const auto& row = g.gen_index(*shifted, 2, g.virtual_tensor(CUDNN_DATA_INT32, scores));
    const auto& col = g.gen_index(*shifted, 3, g.virtual_tensor(CUDNN_DATA_INT32, scores));
    const auto& visible =
        g.binary(CUDNN_POINTWISE_CMP_GE, row, col, g.virtual_tensor(CUDNN_DATA_BOOLEAN, scores),
                 CUDNN_DATA_BOOLEAN);
    shifted = &g.select(*shifted, g.scalar(kUidNegInf), visible, g.virtual_tensor(f32, scores));
  }
  const auto& probs = g.unary(CUDNN_POINTWISE_EXP, *shifted, g.virtual_tensor(f32, scores));

  // dV = Pᵀ·dO, Pᵀ in the I/O type.
  head_grad(g.reshape(probs, g.virtual_tensor(io, transposed_dims, transposed_strides)), d_out, dv);

  // dS = (dO·Vᵀ − rowsum(dO ∘ O)) ∘ P × scale.
  const auto& dp = g.matmul(d_out, v_t, g.virtual_tensor(f32, scores));
  const auto& centered = g.binary(CUDNN_POINTWISE_SUB, dp, row_dot, g.virtual_tensor(f32, scores));
  const auto& ds_unscaled =
      g.binary(CUDNN_POINTWISE_MUL, centered, probs, g.virtual_tensor(f32, scores));
  const auto& ds = g.binary(CUDNN_POINTWISE_MUL, ds_unscaled, scale, g.virtual_tensor(f32, scores));

  // dK = dSᵀ·Q, dSᵀ in the I/O type.
  head_grad(g.reshape(ds, g.virtual_tensor(io, transposed_dims, transposed_strides)), q, dk);

  // dQ = dS·K into the fp32 accumulator (a real tensor: how the engine is told to accumulate dQ
  // across key blocks), then cast to dQ. K is Kᵀ's tensor reshaped back, fp32 as cudnn-frontend
  // leaves a virtual tensor.
  const auto& k = g.reshape(k_t, g.virtual_tensor(f32, {b, hk, skv, d}));
  const auto& dq_accum = g.tensor(kUidDQAccum, f32, rows);
  g.unary(CUDNN_POINTWISE_IDENTITY, g.matmul(ds, k, dq_accum), dq);
  g.finalize(handle);
  return graph;
}

std::unique_ptr<SdpaPlan> sdpa_backward_plan(const Problem& p, cudnnHandle_t handle) {
  return std::move(choose_plans([&] { return build_sdpa_backward_graph(p, handle); }, handle,
                                PlanChoice::first,
                                fmt::format("the SDPA backward of {}", p.shape_label()))
                       .front());
}

cg::Descriptor sdpa_backward_variant_pack(const AttentionTensors& t, const GradientTensors& g,
                                          bool causal, const SdpaBackwardBuffers& buffers,
                                          const SdpaBackwardScalars& scalars) {
  std::vector<int64_t> uids{kUidQ,  kUidK,  kUidV,  kUidO,      kUidStats,   kUidScale, kUidDOut,
                            kUidDQ, kUidDK, kUidDV, kUidRowDot, kUidDQAccum, kUidOne};
  // cuDNN's pointer array is not const: the inputs are only read.
  std::vector<void*> pointers{const_cast<void*>(t.q),
                              const_cast<void*>(t.k),
                              const_cast<void*>(t.v),
                              t.o,
                              buffers.stats,
                              const_cast<float*>(&scalars.scale),
                              const_cast<void*>(g.d_out),
                              g.dq,
                              g.dk,
                              g.dv,
                              buffers.row_dot,
                              buffers.dq_accum,
                              const_cast<float*>(&scalars.one)};
  if (causal) {
    uids.push_back(kUidNegInf);
    pointers.push_back(const_cast<float*>(&scalars.masked));
  }
  return cg::variant_pack(uids, pointers, buffers.workspace);
}

}  // namespace sdpa
