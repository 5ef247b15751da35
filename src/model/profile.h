// What a forward launched and what it cost: the profile's plain records, filled from CUPTI
// (our own runs or a traced program) and read by every printer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/counters.h"
#include "model/ops.h"

namespace sdpa {

enum OccupancyLimiter : unsigned {
  kLimitWarps = 1u << 0,
  kLimitRegisters = 1u << 1,
  kLimitSharedMemory = 1u << 2,
  kLimitBlocks = 1u << 3,
  kLimitBarriers = 1u << 4,
};

// Each set flag's name: "registers", "shared memory", "warps", "blocks", "barriers".
std::vector<std::string> limiter_names(unsigned limiters);
unsigned limiter_flag(const std::string& name);  // 0 for a name that is none of those
// "registers", "registers, shared memory", ... ("" when no flag is set).
std::string limiter_text(unsigned limiters);

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

enum class KernelCategory { tensor_core_gemm, simt_gemm, elementwise, reduction, softmax, fused_attention, copy, other };
const char* category_name(KernelCategory c);  // "tensor-core GEMM", "SIMT fp32 GEMM", ...
const char* category_id(KernelCategory c);    // the JSON's: "tensor_core_gemm", "simt_gemm", ...
bool parse_category_id(const std::string& id, KernelCategory& out);

struct Dim3 {
  int x = 1, y = 1, z = 1;
  int64_t count() const { return int64_t{x} * y * z; }
  bool operator==(const Dim3&) const = default;
};

// One kernel of a forward: a name with one launch configuration.
struct KernelProfile {
  std::string name;       // demangled and shortened
  std::string full_name;  // demangled
  KernelCategory category = KernelCategory::other;
  double per_forward = 0;  // launches per forward
  double mean_us = 0;      // one launch
  Dim3 grid, block, cluster;
  int registers_per_thread = 0;
  int static_shared = 0;   // bytes per block
  int dynamic_shared = 0;  // bytes per block
  int shared_config = 0;   // shared-memory carveout the SM ran with, bytes
  std::string launch_type;  // "regular", "cooperative", ...
  std::optional<OccupancyEstimate> occupancy;  // none on an architecture the calculator lacks
  // Hardware counters of one launch (mean over the forward's launches), metric name -> value;
  // empty without a counter pass.
  std::map<std::string, double> counters;

  double us_per_forward() const { return per_forward * mean_us; }
};

// Copies of one direction ("DtoD", "HtoD", ...).
struct MemcpyProfile {
  std::string kind;
  double per_forward = 0;
  double bytes_per_forward = 0;
  double mean_us = 0;

  // 0 for a result that says 0 copies per forward (never inf).
  double mib_per_copy() const { return per_forward > 0 ? bytes_per_forward / per_forward / 1048576.0 : 0.0; }
};

struct ForwardProfile {
  int kernels = 0;
  int memcpys = 0;
  uint64_t memcpy_bytes = 0;
  int memsets = 0;
  double kernel_us = 0;  // the kernels' durations added up
  double wall_us = 0;    // from run() starting on the host to the forward's last GPU work ending
};

// A kernel of a library (cuBLAS, cuDNN), from its name: its launch shape is the library's design,
// not the backend's choice.
bool library_kernel(const std::string& name);

// One line that says what the profile shows ("rule" names the check, for scripts). The text is
// "what: this case's figures"; what comes before the first ": " reads the same for every shape.
struct Finding {
  std::string rule;
  std::string text;
  bool operator==(const Finding&) const = default;
};

// What a forward launches, from CUPTI activity records.
struct CaseProfile {
  std::vector<ForwardProfile> forwards;
  std::vector<KernelProfile> kernels;  // in the order of their first launch
  std::vector<MemcpyProfile> memcpys;
  uint64_t dropped_records = 0;        // lost by CUPTI: counts are then lower bounds
  uint64_t unattributed = 0;           // GPU work recorded outside every forward
  int nvtx_ranges = 0;                 // forwards whose window came from their NVTX range (else host clock)
  std::vector<Finding> findings;
  std::optional<CounterSource> counters;  // how the kernels' counters were read; none without them
  std::string counters_skipped;           // why a counter pass that was asked for gave none
  // The CPU ops the forwards' NVTX ranges held (a traced program under emit_nvtx); none when the
  // forwards held no op range.
  std::optional<OpsProfile> ops;
  // The kernels of the last profiled forward in launch order, as indices into `kernels`: the
  // counter pass's ranges are matched to kernels by it. Not saved.
  std::vector<std::size_t> launch_order;

  double kernels_per_forward() const;
  double memcpys_per_forward() const;
  double memsets_per_forward() const;
  double kernel_us_per_forward() const;  // the kernels' durations added up, mean over forwards
  double wall_us_per_forward() const;
  const KernelProfile* dominant_kernel() const;  // most GPU time; nullptr without kernels
};

// Host (CPU) cost of a backend, measured with CUPTI off.
struct HostCost {
  double setup_ms = 0;       // create + prepare: handles, workspace, masks, plans (once)
  double first_call_us = 0;  // the first run(): lazy module loading, library heuristics
  double per_call_us = 0;    // run() in steady state, launches only (no synchronization)
  int calls = 0;
};


}  // namespace sdpa
