// Occupancy of a kernel launch from its record alone (block, registers, shared memory) and the
// device's limits, with the factor that limits it; works without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/profile.h"

namespace sdpa {

// Per-SM and per-block limits of one architecture, tabulated so that CI needs no GPU.
struct ArchLimits {
  int cc_major = 0;
  int cc_minor = 0;
  int max_threads_per_sm = 0;
  std::size_t shared_per_sm = 0;           // the largest shared-memory carveout
  std::size_t shared_per_block_optin = 0;  // what a kernel may opt into
};

// sm_80, sm_86, sm_89, sm_90, sm_100; nullopt for an architecture not in the table.
std::optional<ArchLimits> arch_limits(int cc_major, int cc_minor);

// What a kernel record says about one launch.
struct LaunchResources {
  int threads_per_block = 0;
  int registers_per_thread = 0;
  std::size_t static_shared = 0;
  std::size_t dynamic_shared = 0;
  int64_t grid_blocks = 0;          // for the profiler-style estimate, which caps by grid / SMs
  std::size_t shared_config = 0;    // carveout the SM ran with (bytes); 0: the largest
};

// Bit flags, as several limits can tie.




// nullopt when the calculator rejects the input (a zero-thread block, an unknown architecture).
std::optional<OccupancyEstimate> estimate_occupancy(const LaunchResources& launch, const ArchLimits& arch,
                                                    int sm_count);

}  // namespace sdpa
