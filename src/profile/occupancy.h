// Occupancy of a kernel launch from its record alone (block, registers, shared memory) and the
// device's limits, with the factor that limits it; works without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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
enum OccupancyLimiter : unsigned {
  kLimitWarps = 1u << 0,
  kLimitRegisters = 1u << 1,
  kLimitSharedMemory = 1u << 2,
  kLimitBlocks = 1u << 3,
  kLimitBarriers = 1u << 4,
};

struct OccupancyEstimate {
  int blocks_per_sm = 0;    // theoretical, with the opt-in shared-memory limit
  double theoretical = 0;   // active warps / maximum warps per SM, 0..1
  unsigned limiters = 0;    // OccupancyLimiter flags
  int block_limit_registers = 0;
  int block_limit_shared_memory = 0;
  int block_limit_warps = 0;
  int block_limit_blocks = 0;
  // What PyTorch's profiler (Kineto) prints as "est. achieved occupancy": the default 48 KB
  // per-block limit, no opt-in, blocks per SM capped by grid / SM count. 0..1.
  double profiler_style = 0;
};

// Each set flag's name: "registers", "shared memory", "warps", "blocks", "barriers".
std::vector<std::string> limiter_names(unsigned limiters);
unsigned limiter_flag(const std::string& name);  // 0 for a name that is none of those
// "registers", "registers, shared memory", ... ("" when no flag is set).
std::string limiter_text(unsigned limiters);

// nullopt when the calculator rejects the input (a zero-thread block, an unknown architecture).
std::optional<OccupancyEstimate> estimate_occupancy(const LaunchResources& launch, const ArchLimits& arch,
                                                    int sm_count);

}  // namespace sdpa
