// The SDPA forward as a cuDNN operation graph, and execution plans for it.
#pragma once

#include <cudnn_graph.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cudnn/graph.h"
#include "backends/cudnn/paged_kv_graph.h"
#include "backends/cudnn/plans.h"
#include "model/problem.h"

namespace sdpa {

// Unique ids of the graph's non-virtual tensors: what the variant pack binds.
enum SdpaTensorUid : int64_t {
  kUidQ = 1,
  kUidK = 2,
  kUidV = 3,
  kUidO = 4,
  kUidStats = 5,   // [B, Hq, Sq, 1] float: max + log(sum), the softmax statistics
  kUidScale = 6,   // float by value
  kUidNegInf = 7,  // float by value, causal and paged graphs only
};

// Q·Kᵀ → × scale → (paged: inside the sequence ? s : −inf) → (causal: row ≥ col ? s : −inf) →
// max / sub / exp / sum / div → P·V, with the statistics branch log(sum) + max written to
// kUidStats. A paged problem's K and V are loaded from its pools (paged_kv_graph.h). Finalized on
// `handle`.
std::unique_ptr<cudnn_graph::OperationGraph> build_sdpa_graph(const Problem& p,
                                                              cudnnHandle_t handle);

// The cuDNN type of Q, K, V, O (and dO, dQ, dK, dV).
cudnnDataType_t io_data_type(DType t);

// The −inf the causal mask selects: cuDNN before 9.10 prefers the lowest finite float.
float masked_score_value(std::size_t cudnn_version);

// The forward's plans for `p` (graph built and timed here), chosen as choose_plans does.
std::vector<std::unique_ptr<SdpaPlan>> sdpa_plans(const Problem& p, cudnnHandle_t handle, PlanChoice choice);

// Host scalars a variant pack points at: they must outlive it.
struct SdpaScalars {
  float scale = 1;
  float masked = 0;  // what masked scores become (masked_score_value)
};

// What the forward's variant pack binds besides the tensors and the scalars.
struct SdpaBuffers {
  void* stats = nullptr;      // kUidStats
  void* workspace = nullptr;  // the plan's
  SequenceLengths lengths;    // a paged graph's
};

// The variant pack binding `t` (its pages when paged), the buffers and the scalars to a plan.
cudnn_graph::Descriptor sdpa_variant_pack(const AttentionTensors& t, bool causal,
                                          const SdpaBuffers& buffers, const SdpaScalars& scalars);

}  // namespace sdpa
