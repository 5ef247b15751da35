// CUPTI activity records copied into plain structs: what the analysis and the timeline read, free
// of CUPTI's types so that they can be tested without a GPU. Times are CUPTI timestamps in
// nanoseconds, all on CUPTI's one clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/result.h"

namespace sdpa {

// Where a piece of GPU work ran. The ids are CUPTI's; graph ids are 0 for work not launched from
// a CUDA graph.
struct GpuPlace {
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
};

struct KernelRecord {
  std::string name;  // as recorded: mangled for C++ kernels
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0;
  GpuPlace place;
  Dim3 grid, block, cluster;
  int registers_per_thread = 0;
  int static_shared = 0;
  int dynamic_shared = 0;
  int shared_config = 0;
  std::string launch_type;
};

struct MemcpyRecord {
  std::string kind;  // "DtoD", "HtoD", "DtoH", ...
  uint64_t bytes = 0;
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0;
  GpuPlace place;
};

struct MemsetRecord {
  uint64_t bytes = 0;
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0;
  GpuPlace place;
};

enum class ApiKind { runtime, driver };

// A runtime or driver API call on the host: its correlation id names the GPU work it launched.
struct ApiRecord {
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0;
  ApiKind kind = ApiKind::runtime;
  uint32_t callback_id = 0;  // CUPTI's id of the call within its API
  std::string name;          // "cudaLaunchKernel", "cuLaunchKernelEx", ... (without CUPTI's "_v7000")
  uint32_t process_id = 0, thread_id = 0;
};

// One end of an NVTX push/pop range; the two ends share an id, the start carries the name.
struct MarkerRecord {
  uint32_t id = 0;
  uint64_t timestamp = 0;
  bool is_start = false;
  std::string name;
  std::string domain;  // empty for NVTX's default domain
  uint32_t process_id = 0, thread_id = 0;
};

struct ActivityRecords {
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<ApiRecord> api_calls;
  std::vector<MarkerRecord> markers;
  uint64_t dropped = 0;
};

inline const char* api_kind_name(ApiKind kind) { return kind == ApiKind::driver ? "driver" : "runtime"; }

}  // namespace sdpa
