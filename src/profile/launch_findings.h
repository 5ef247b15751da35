// What launching costs, stated as measured (--launch eager,graph): findings that hold a case's
// host time per call against its GPU time, and a graph case against the eager case of its backend
// and problem. Each has its figures; none where the data does not show it.
#pragma once

#include <vector>

#include "model/result.h"

namespace sdpa {

// launch-bound: an eager case whose host time per call exceeds its GPU time (median): called back
// to back, the CPU sets its pace, not the GPU (with the graph case's host time when there is one);
// graph-launch: a graph case's host µs per call (one cudaGraphLaunch) and GPU time against the
// eager case's.
std::vector<Finding> launch_findings(const CaseResult& c, const std::vector<CaseResult>& cases);

// Each profiled case's launch findings in its profile's findings, in place of any it had.
void add_launch_findings(std::vector<CaseResult>& cases);

}  // namespace sdpa
