// The one result model: every printer (table, JSON) and every later consumer reads this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device_info.h"
#include "measure/ceilings.h"
#include "problem.h"
#include "profile/occupancy.h"
#include "sweep.h"

namespace sdpa {

inline constexpr int kResultSchemaVersion = 3;  // 2: profile, host cost, profiler; 3: sampling statistics, ceilings, memory

enum class CaseStatus { ok, skipped, failed };
const char* status_name(CaseStatus s);

struct Verification {
  double rel_l2_error = 0;  // ||out - ref|| / ||ref|| over finite outputs
  double max_abs_error = 0;
  uint64_t non_finite = 0;  // NaN/Inf outputs: unwritten (poisoned) elements land here
  double rel_l2_tolerance = 0;
  double max_abs_tolerance = 0;
  bool passed = false;
};

struct TimingStats {
  int warmup = 0;
  int samples = 0;  // kept samples
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double mean_ms = 0;
  double q1_ms = 0;
  double q3_ms = 0;
  // Half-width of the median's ~95% confidence interval over the median; -1 when unknown
  // (results written before schema 3).
  double relative_spread = -1;
  bool converged = false;      // relative_spread fell under --max-noise before --timeout
  bool cold_cache = true;      // L2 flushed before each sample (false with --hot)
  int throttled_dropped = 0;   // samples dropped because the SM clock was under the threshold
  double sm_clock_mhz = 0;     // median SM clock over the kept samples
  std::vector<double> samples_ms;  // the kept samples in order (for --samples, not in the JSON)
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

  double us_per_forward() const { return per_forward * mean_us; }
};

// Copies of one direction ("DtoD", "HtoD", ...).
struct MemcpyProfile {
  std::string kind;
  double per_forward = 0;
  double bytes_per_forward = 0;
  double mean_us = 0;
};

struct ForwardProfile {
  int kernels = 0;
  int memcpys = 0;
  uint64_t memcpy_bytes = 0;
  int memsets = 0;
  double kernel_us = 0;  // the kernels' durations added up
  double wall_us = 0;    // from run() starting on the host to the forward's last GPU work ending
};

// One line that says what the profile shows ("rule" names the check, for scripts).
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

  double kernels_per_forward() const;
  double memcpys_per_forward() const;
  double memsets_per_forward() const;
  const KernelProfile* dominant_kernel() const;  // most GPU time; nullptr without kernels
};

// Host (CPU) cost of a backend, measured with CUPTI off.
struct HostCost {
  double setup_ms = 0;       // create + prepare: handles, workspace, masks, plans (once)
  double first_call_us = 0;  // the first run(): lazy module loading, library heuristics
  double per_call_us = 0;    // run() in steady state, launches only (no synchronization)
  int calls = 0;
};

struct CaseResult {
  std::string backend;
  Problem problem;
  CaseStatus status = CaseStatus::skipped;
  std::string reason;           // why skipped or failed
  std::size_t predicted_bytes = 0;  // device memory the case needs, predicted before it runs
  std::optional<Verification> verification;
  std::optional<TimingStats> timing;
  std::optional<CaseProfile> profile;  // none when profiling is off
  std::optional<HostCost> host;
  std::size_t measured_bytes = 0;  // device memory in use while the case ran, measured
  std::string chosen_config;       // what the backend chose, e.g. cuDNN's engine and knobs

  double achieved_tb_per_s() const;  // the problem's minimal bytes over the median time

  double tflops() const;  // at the median time; 0 without timing
};

// Whether cases carry a CUPTI profile, and why not when they do not.
struct Profiler {
  bool enabled = false;
  std::string description;  // "CUPTI 13.0 (API 130001)" when enabled, else the reason it is off
};

struct Environment {
  std::string tool_version;
  std::string git_sha;
  std::string command_line;
  std::string hostname;
  std::string started_at;  // ISO 8601, UTC
  uint64_t seed = 0;
  std::optional<DeviceInfo> device;  // none for a dry run
  Profiler profiler;
  std::optional<Ceilings> ceilings;  // the device's measured limits, when known
};

struct RunReport {
  Environment environment;
  SweepConfig config;
  std::vector<CaseResult> cases;

  bool any_failed() const;
};

}  // namespace sdpa
