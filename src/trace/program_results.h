// What a traced program may hand to `trace` besides its records: its own timing of each case and
// what it is (share/sdpa-prof/torch_sdpa.py writes it). A JSON file at the path trace puts in
// SDPA_PROF_RESULTS:
//   {"schema":"sdpa-prof/program-results","schema_version":1,"source":"pytorch 2.11.0, cuDNN
//   91900",
//    "cases":[{"range":"sdpa-prof/torch:flash/B8_H16_S1024_D64_bf16_causal","status":"ok",
//              "warmup":3,"cold_cache":true,"samples_ms":[0.157,...],
//              "host_first_call_us":2100.5,"host_us":[131.2,...]},   (version 2, optional)
//             {"range":"...","status":"skipped","reason":"PyTorch's own words"}]}
#pragma once

#include <string>
#include <vector>

#include "model/range_name.h"
#include "model/result.h"

namespace sdpa {

inline constexpr const char* kProgramResultsEnv = "SDPA_PROF_RESULTS";

struct ProgramCase {
  ForwardRange range;  // the case it is about (forward unused)
  CaseStatus status = CaseStatus::ok;
  std::string reason;
  std::optional<TimingStats> timing;
  // The program's own host time of a call (launches only, no op ranges): the median of its
  // samples and the first call.
  std::optional<HostCost> host;
};

struct ProgramResults {
  std::string source;
  std::vector<ProgramCase> cases;
};

// Reads the file as hostile input; InputError names the file and the field.
ProgramResults read_program_results(const std::string& path);

// The program's cases merged into the traced ones, matched by their range: timing and source
// added, skipped cases added with their reason, a traced case it does not name keeps `source`.
void merge_program_results(const ProgramResults& results, std::vector<CaseResult>& cases);

}  // namespace sdpa
