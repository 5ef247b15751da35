// --shard K/N: a deterministic part of a sweep for one of N runners, balanced by predicted cost.
#pragma once

#include <vector>

#include "backends/backend.h"
#include "model/problem.h"

namespace sdpa {

struct SweepPlan;

// What a case is predicted to cost, in seconds of a runner's time: a fixed part (inputs,
// verification, profile and counter passes, the timing's minimum) and the forwards it times, at
// a nominal H100-class rate. A choice of every variant counts as several cases.
double predicted_case_seconds(const Problem& problem, const BackendChoice& choice);

// The shard (1..count) of each case of the plan, problem-major (problem i, choice j at
// i * choices + j): the costliest first, each to the shard with the least cost so far (the lowest
// index on a tie). The same plan gives the same assignment on every runner.
std::vector<int> assign_shards(const SweepPlan& plan, int count);

}  // namespace sdpa
