// The one result model: every printer (table, JSON) and every later consumer reads this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/clocks.h"
#include "model/device.h"
#include "model/problem.h"
#include "model/profile.h"
#include "model/sweep.h"
#include "model/trace.h"

namespace sdpa {

// 2: profile, host cost, profiler; 3: sampling statistics, ceilings, memory; 4: "setup" (what a
// backend chose and its setup times) replaces "chosen_config", variants are cases of their own;
// 5: hardware counters per kernel ("counters") and the pass that read them ("counters_source");
// 6: the problem's "pass" (fwd, bwd, fwd+bwd; absent: fwd), the verified tensor ("tensor"); a
// profile's CPU ops per forward ("ops": the traced program's NVTX op ranges); the HBM read ceiling
// ("read_tb_per_s"), a case's "ceiling" and "ridge_point" in its roofline, "page_size" in a paged
// problem; 7: the problem's "launch" (eager, graph; absent: eager).
inline constexpr int kResultSchemaVersion = 7;

enum class CaseStatus { ok, skipped, failed };
const char* status_name(CaseStatus s);

struct Verification {
  double rel_l2_error = 0;  // ||out - ref|| / ||ref|| over finite outputs
  double max_abs_error = 0;
  uint64_t non_finite = 0;  // NaN/Inf outputs: unwritten (poisoned) elements land here
  double rel_l2_tolerance = 0;
  double max_abs_tolerance = 0;
  bool passed = false;
  // The tensor these figures are of: "O", or for a backward the gradient nearest its bound
  // ("dQ", "dK", "dV") when every check passed, else the first that failed.
  std::string tensor = "O";
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
  bool interrupted = false;    // sampling cut short by a stop request (Ctrl-C, SIGTERM)
  bool cold_cache = true;      // L2 flushed before each sample (false with --hot)
  int throttled_dropped = 0;   // samples dropped because the SM clock was under the threshold
  // Every sample ran under the threshold: they are the times, not converged and not to be trusted
  // (sm_clock_mhz is then their median clock).
  bool all_throttled = false;
  double sm_clock_mhz = 0;     // median SM clock over the kept samples
  double sm_clock_peak_mhz = 0;  // the device's peak SM clock, which the samples were held against
  std::optional<PowerSummary> power;  // what NVML read during the samples; none without NVML
  std::vector<double> samples_ms;  // the kept samples in order (for --samples, not in the JSON)
};

// What a backend chose for a problem and what choosing cost (cuDNN: engine, knobs, plan build).
struct BackendSetup {
  std::string config;  // "engine 2, knobs {kernel_cfg=32} (heuristics mode A, config 1 of 3), cuDNN 91400"
  std::vector<std::pair<std::string, double>> times_ms;  // ("graph", 0.4), ("plan", 1050), ...
  bool empty() const { return config.empty() && times_ms.empty(); }
};

inline constexpr const char* kSourceSdpaProf = "sdpa-prof";

struct CaseResult {
  std::string backend;
  // What ran it: "sdpa-prof" (our own backends), "pytorch 2.11.0, cuDNN 91900"
  // (share/sdpa-prof/torch_sdpa.py under trace), "traced: CMD" (another traced program).
  std::string source = kSourceSdpaProf;
  Problem problem;
  CaseStatus status = CaseStatus::skipped;
  std::string reason;           // why skipped or failed
  std::size_t predicted_bytes = 0;  // device memory the case needs, predicted before it runs
  std::optional<Verification> verification;
  std::optional<TimingStats> timing;
  std::optional<CaseProfile> profile;  // none when profiling is off
  std::optional<HostCost> host;
  std::size_t measured_bytes = 0;  // device memory in use while the case ran, measured
  BackendSetup setup;              // what the backend chose and its one-time costs
  std::string device_uuid;         // the GPU it ran on, when the result spans several (--devices)

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
  std::optional<DeviceInfo> device;  // none for a dry run; the first of `devices` when there are several
  Profiler profiler;
  std::optional<Ceilings> ceilings;  // the device's measured limits, when known
  PowerSource power;                 // NVML, or why power and clock-event reasons are missing
  Profiler counters;                 // the range profiler's description, or why there are no counters
  std::vector<DeviceInfo> devices{};  // every GPU the cases ran on, when more than one (--devices, merge)
};

// --shard K/N: which part of the sweep's cases a run holds (index 1..count).
inline constexpr int kMaxShards = 10000;

struct Shard {
  int index = 1;
  int count = 1;
  bool operator==(const Shard&) const = default;
};

struct RunReport {
  Environment environment;
  SweepConfig config;
  std::vector<CaseResult> cases;
  // The sweep ended before its last case (a signal, a poisoned GPU context, a case past
  // --case-timeout): the cases here are those that ran.
  bool partial = false;
  std::string partial_reason;
  std::optional<TraceInfo> trace;  // set by `trace`: the command and its processes
  std::optional<Shard> shard;      // set by --shard: the other shards' cases are not here

  bool any_failed() const;
};

}  // namespace sdpa
