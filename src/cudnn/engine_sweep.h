// `sdpa-prof --cudnn-engines all`: every cuDNN engine config for a problem, verified and timed.
#pragma once

#include <cstdint>
#include <iosfwd>

#include "measure/timing.h"
#include "problem.h"

namespace sdpa {

// Prints one row per engine config that finalizes; returns 0 when at least one finalized and
// every one verified, else 1. Throws InputError when no GPU or no cuDNN is there to ask.
int time_every_cudnn_engine(const Problem& p, uint64_t seed, const TimingOptions& timing, std::ostream& out);

}  // namespace sdpa
