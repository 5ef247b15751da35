// `run --with-torch`: PyTorch's own attention paths on the problems of a sweep, run by
// share/sdpa-prof/torch_sdpa.py under trace, as cases named torch:<backend> beside ours.
#pragma once

#include <string>
#include <vector>

#include "model/problem.h"
#include "model/result.h"
#include "trace/trace_run.h"

namespace sdpa {

inline constexpr const char* kTorchScriptName = "torch_sdpa.py";

// PyTorch's paths (the backends' pytorch_path) as the script's cases name them: "flash" ->
// "torch:flash", each once.
std::vector<std::string> torch_backends_for(const std::vector<std::string>& pytorch_paths);

// Why PyTorch cannot run here (python3 missing, torch not importable), or empty.
std::string torch_unavailable();

// share/sdpa-prof/torch_sdpa.py: SDPA_PROF_TORCH_SCRIPT, else as the executable finds it
// (find_torch_script_from); InputError when none is there.
std::string find_torch_script();

// The script as an sdpa-prof in exe_dir finds it: installed (<bindir>/../share/sdpa-prof, as
// `cmake --install` puts it), else in the source tree of the build folder it was built in.
std::string find_torch_script_from(const std::string& exe_dir);

struct TorchRun {
  std::vector<CaseResult> cases;
  std::vector<std::string> notes;      // said on stderr
  std::vector<ProcessRecords> records;  // with keep_records: every traced process's, for the timeline
  std::string stderr_text;              // what the script said on stderr, to pass on
};

// One traced run of the script per problem, every backend in it. Each requested path has its
// row: one the script did not report (it failed before, or crashed) is failed with the script's
// last line on stderr.
TorchRun run_torch_paths(const std::vector<Problem>& problems,
                         const std::vector<std::string>& torch_backends, int device, bool keep_records);

}  // namespace sdpa
