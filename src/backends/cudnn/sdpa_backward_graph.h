// The SDPA backward as a cuDNN operation graph (dO, O and the forward's statistics → dQ, dK, dV),
// in the pattern cuDNN's runtime-fusion engines take as the fused flash-attention backward, and
// execution plans for it.
#pragma once

#include <cudnn_graph.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cudnn/graph.h"
#include "backends/cudnn/plans.h"
#include "model/problem.h"

namespace sdpa {

// The backward graph's non-virtual tensors besides the forward's kUidQ ... kUidNegInf (the
// backward binds those uids to the same buffers and scalars).
enum SdpaBackwardTensorUid : int64_t {
  kUidDOut = 8,
  kUidDQ = 9,
  kUidDK = 10,
  kUidDV = 11,
  kUidRowDot = 12,   // [B, Hq, Sq, 1] float: rowsum(dO ∘ O), written by the graph, read by it
  kUidDQAccum = 13,  // [B, Hq, Sq, D] float: dQ accumulated across key blocks before its cast
  kUidOne = 14,      // float by value: the dropout scale's place, 1 without dropout
};

// Why cuDNN's fused backward cannot run `p` with the loaded cuDNN `cudnn_version`, beyond what the
// forward declines, or nullopt when it can (cudnn-frontend's support surface for the backward).
std::optional<std::string> sdpa_backward_unsupported(const Problem& p, std::size_t cudnn_version);

// rowsum(dO ∘ O) → Q·Kᵀ × scale − Stats → (causal: row ≥ col ? s : lowest) → exp = P;
// dV = Pᵀ·dO; dS = (dO·Vᵀ − rowsum) ∘ P × scale; dK = dSᵀ·Q; dQ = dS·K through an fp32 dQ
// accumulator. Grouped heads: dK and dV per query head, then summed over the group. Finalized on
// `handle`.
std::unique_ptr<cudnn_graph::OperationGraph> build_sdpa_backward_graph(const Problem& p,
                                                                       cudnnHandle_t handle);

// The backward's plan for `p` (graph built and timed here), chosen as choose_plans does.
std::unique_ptr<SdpaPlan> sdpa_backward_plan(const Problem& p, cudnnHandle_t handle);

// Device memory the backward needs beyond the forward's and its plan's workspace.
std::size_t sdpa_backward_buffer_bytes(const Problem& p);

// Whether the caller must zero the dQ accumulator before each backward: cuDNN does it itself
// from 9.6.
bool dq_accum_needs_zeroing(std::size_t cudnn_version);

// Host scalars a backward variant pack points at: they must outlive it.
struct SdpaBackwardScalars {
  float scale = 1;
  // What masked scores become once the statistics are subtracted: cudnn-frontend's value on every
  // version.
  float masked = std::numeric_limits<float>::lowest();
  float one = 1;
};

// What the backward graph binds besides the tensors and gradients.
struct SdpaBackwardBuffers {
  void* stats = nullptr;     // the forward's, kUidStats
  void* row_dot = nullptr;   // kUidRowDot
  void* dq_accum = nullptr;  // kUidDQAccum
  void* workspace = nullptr;
};

cudnn_graph::Descriptor sdpa_backward_variant_pack(const AttentionTensors& t,
                                                   const GradientTensors& g, bool causal,
                                                   const SdpaBackwardBuffers& buffers,
                                                   const SdpaBackwardScalars& scalars);

}  // namespace sdpa
