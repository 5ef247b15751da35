// What `trace` saw of a traced program beyond its cases: per process, the GPU work outside the
// case ranges (model/range_name.h), grouped by the NVTX range that launched it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sdpa {

// GPU work launched inside one NVTX range (the innermost; any name), outside every case range.
struct RangeActivity {
  std::string name;  // empty: outside any range
  uint64_t kernels = 0;
  uint64_t memcpys = 0;
  uint64_t memsets = 0;
  double kernel_us = 0;  // summed kernel durations
};

struct ProcessTrace {
  int64_t pid = 0;
  std::string cupti;     // the CUPTI that recorded it, as the process reported it
  bool partial = false;  // its records stop early (os._exit, a crash, a signal, a cut line)
  std::string partial_reason;
  uint64_t kernels = 0, memcpys = 0, memsets = 0;  // everything recorded, cases included
  uint64_t dropped = 0;                            // records CUPTI dropped
  uint64_t records_left_out = 0;                   // past the reader's bound: counted, not analysed
  int cases = 0;                                   // cases cut from its ranges
  std::vector<RangeActivity> outside_cases;        // in order of first launch
};

struct TraceInfo {
  std::string command;                  // the traced command line
  int exit_code = 0;                    // the command's, as a shell reports it (128 + signal)
  std::vector<ProcessTrace> processes;  // each process that initialized CUDA
};

}  // namespace sdpa
