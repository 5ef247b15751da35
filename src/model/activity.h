// CUPTI activity records copied into plain structs: what the analysis reads, free of CUPTI's
// types so that it can be tested without a GPU. Times are CUPTI timestamps in nanoseconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/result.h"

namespace sdpa {

struct KernelRecord {
  std::string name;  // as recorded: mangled for C++ kernels
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0;
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
};

struct MemsetRecord {
  uint64_t bytes = 0;
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0;
};

// A runtime or driver API call on the host: its correlation id names the GPU work it launched.
struct ApiRecord {
  uint64_t start = 0, end = 0;
  uint32_t correlation = 0;
};

// One end of an NVTX push/pop range; the two ends share an id, the start carries the name.
struct MarkerRecord {
  uint32_t id = 0;
  uint64_t timestamp = 0;
  bool is_start = false;
  std::string name;
};

struct ActivityRecords {
  std::vector<KernelRecord> kernels;
  std::vector<MemcpyRecord> memcpys;
  std::vector<MemsetRecord> memsets;
  std::vector<ApiRecord> api_calls;
  std::vector<MarkerRecord> markers;
  uint64_t dropped = 0;
};

}  // namespace sdpa
