// Execution plans for a finalized cuDNN operation graph: heuristics mode A's engine configs first,
// then the fallback list's, each tried until one finalizes (or every one, for the variants).
#pragma once

#include <cudnn_graph.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cudnn/graph.h"

namespace sdpa {

// One execution plan and what it took to get it.
struct SdpaPlan {
  std::shared_ptr<const cudnn_graph::OperationGraph> graph;  // the plan refers to its descriptors
  cudnn_graph::Descriptor plan;
  cudnn_graph::EngineConfigInfo engine;
  int64_t workspace_bytes = 0;
  std::string chosen_by;     // "heuristics mode A, config 1 of 3"
  double graph_ms = 0;       // descriptors and the operation graph
  double heuristics_ms = 0;  // heuristics queries, every mode tried
  double plan_ms = 0;        // plan finalization, failed configs included (runtime compilation)
  int configs_tried = 0;
};

enum class PlanChoice {
  first,  // the first config that finalizes, heuristics mode A first, then the fallback list
  every,  // every config of modes A and fallback that finalizes, each once
};

// Builds a finalized operation graph.
using GraphBuilder = std::function<std::unique_ptr<cudnn_graph::OperationGraph>()>;

// Plans for the graph `build` makes (its time is the plans' graph_ms). Throws ApiError carrying
// cuDNN's reasons when no config finalizes; `what` names the graph there ("the SDPA forward of
// ...").
std::vector<std::unique_ptr<SdpaPlan>> choose_plans(const GraphBuilder& build, cudnnHandle_t handle,
                                                    PlanChoice choice, const std::string& what);

// "eng2.cfg32": an engine config as a backend variant's name.
std::string variant_name(const cudnn_graph::EngineConfigInfo& engine);

}  // namespace sdpa
