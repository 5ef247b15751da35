// One traced process's records as cases and the rest: each case range (model/range_name.h) is a
// forward of a case, analysed by the same code as `run`'s profile pass; the GPU work outside
// them is summed per NVTX range.
#pragma once

#include <optional>
#include <vector>

#include "io/record_file.h"
#include "model/result.h"
#include "profile/occupancy.h"

namespace sdpa {

struct TracedProcess {
  std::vector<CaseResult> cases;  // ok, with a profile; no timing (the program may hand it over)
  ProcessTrace trace;
};

// `arch` empty: no occupancy. Cases come in the order their first forward began.
TracedProcess analyze_traced_process(const RecordFile& file, const std::optional<ArchLimits>& arch,
                                     int sm_count);

}  // namespace sdpa
