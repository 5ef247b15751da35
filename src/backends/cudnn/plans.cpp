#include "backends/cudnn/plans.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "backends/cudnn/cudnn_check.h"

namespace sdpa {
namespace {

namespace cg = cudnn_graph;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

constexpr cudnnBackendHeurMode_t kHeuristicModes[] = {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK};

struct Candidate {
  cg::Descriptor config;
  std::string chosen_by;
};

// Every config the heuristics propose, mode A's first; `why` collects the modes that gave none.
std::vector<Candidate> candidates(const cg::Descriptor& graph, std::string& why,
                                  double& heuristics_ms) {
  std::vector<Candidate> all;
  const Clock::time_point start = Clock::now();
  for (const cudnnBackendHeurMode_t mode : kHeuristicModes) {
    std::string mode_why;
    std::vector<cg::Descriptor> configs = cg::heuristic_configs(graph, mode, mode_why);
    if (configs.empty()) why += fmt::format("{}{}", why.empty() ? "" : "; ", mode_why);
    for (std::size_t i = 0; i < configs.size(); ++i)
      all.push_back(Candidate{std::move(configs[i]),
                              fmt::format("heuristics mode {}, config {} of {}",
                                          cg::heuristic_mode_name(mode), i + 1, configs.size())});
  }
  heuristics_ms = ms_since(start);
  return all;
}

}  // namespace

std::vector<std::unique_ptr<SdpaPlan>> choose_plans(const GraphBuilder& build, cudnnHandle_t handle,
                                                    PlanChoice choice, const std::string& what) {
  const Clock::time_point start = Clock::now();
  const std::shared_ptr<const cg::OperationGraph> graph = build();
  const double graph_ms = ms_since(start);
  std::string why;
  double heuristics_ms = 0;
  std::vector<Candidate> proposed = candidates(graph->get(), why, heuristics_ms);

  std::vector<std::unique_ptr<SdpaPlan>> plans;
  std::vector<std::string> seen;
  int tried = 0;
  Clock::time_point plan_start = Clock::now();
  for (Candidate& c : proposed) {
    cg::EngineConfigInfo engine = cg::describe(c.config);
    if (std::find(seen.begin(), seen.end(), engine.text()) != seen.end())
      continue;  // fallback repeats A's
    seen.push_back(engine.text());
    ++tried;
    std::string plan_why;
    std::optional<cg::Descriptor> plan = cg::make_plan(handle, c.config, plan_why);
    if (!plan) {
      if (tried <= 3)
        why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", c.chosen_by, plan_why);
      continue;
    }
    auto result = std::make_unique<SdpaPlan>();
    result->graph = graph;
    result->engine = std::move(engine);
    result->plan = std::move(*plan);
    result->workspace_bytes = cg::plan_workspace_bytes(result->plan);
    result->chosen_by = std::move(c.chosen_by);
    result->graph_ms = graph_ms;
    result->heuristics_ms = heuristics_ms;
    // The first pick pays for every config tried before it; each of every config, for its own.
    result->plan_ms = ms_since(plan_start);
    result->configs_tried = choice == PlanChoice::first ? tried : 1;
    plans.push_back(std::move(result));
    if (choice == PlanChoice::first) return plans;
    plan_start = Clock::now();
  }
  if (plans.empty())
    throw_cudnn_error("choose_plans", CUDNN_STATUS_NOT_SUPPORTED,
                      fmt::format("no engine config finalizes for {} ({} proposed): {}", what,
                                  proposed.size(), why.empty() ? "no reason given" : why));
  return plans;
}

std::string variant_name(const cg::EngineConfigInfo& engine) {
  std::string name = fmt::format("eng{}", engine.engine);
  for (const cg::Knob& k : engine.knobs) {
    const char* knob = cg::knob_name(k.type);
    const std::string label = knob == nullptr ? fmt::format("knob{}_", k.type) : std::string(knob);
    name += fmt::format(".{}{}", label == "kernel_cfg" ? "cfg" : label, k.value);
  }
  return name;
}

}  // namespace sdpa
