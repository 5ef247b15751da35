#include "trace/torch_paths.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/axes.h"
#include "model/errors.h"
#include "model/printable_text.h"
#include "trace/child_process.h"
#include "trace/trace_run.h"

namespace fs = std::filesystem;

namespace sdpa {
namespace {

constexpr const char* kTorchPrefix = "torch:";
constexpr const char* kScriptEnv = "SDPA_PROF_TORCH_SCRIPT";

std::vector<std::string> script_arguments(const Problem& p,
                                          const std::vector<std::string>& backends) {
  std::vector<std::string> names;
  for (const std::string& b : backends)
    names.push_back(b.substr(std::char_traits<char>::length(kTorchPrefix)));
  std::vector<std::string> args{"--backend", fmt::format("{}", fmt::join(names, ","))};
  // The script takes the identity axes by their flags (share/sdpa-prof/torch_sdpa.py); an axis at
  // its default (the softmax scale) is left to the script's own default, and the range names it
  // writes are checked against range_problem() (tests: the torch script's labels).
  for (const AxisSpec& axis : axis_table()) {
    if (!axis.identity || (axis.at_default && axis.at_default(p))) continue;
    const AxisValue value = axis.read(p);
    if (axis.type == AxisType::boolean) {
      args.push_back(std::get<bool>(value) ? axis.flag : "--no-" + axis.flag.substr(2));
    } else {
      args.push_back(axis.flag);
      args.push_back(axis_value_text(value));
    }
  }
  return args;
}

// The last line that says something, printable, at most 300 characters: a traceback's error.
std::string last_line(const std::string& text) {
  const std::size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return "(nothing on stderr)";
  const std::size_t newline = text.rfind('\n', end);
  const std::size_t start = newline == std::string::npos ? 0 : newline + 1;
  return printable_text(text.substr(start, std::min<std::size_t>(end + 1 - start, 300)));
}

}  // namespace

std::vector<std::string> torch_backends_for(const std::vector<std::string>& pytorch_paths) {
  std::vector<std::string> names;
  for (const std::string& path : pytorch_paths)
    if (const std::string torch = kTorchPrefix + path; std::find(names.begin(), names.end(), torch) == names.end())
      names.push_back(torch);
  return names;
}

std::string torch_unavailable() {
  std::string not_started;
  const int code =
      run_child({"python3", "-c", "import torch"}, ChildOptions{{}, true}, not_started);
  if (!not_started.empty()) return not_started;
  return code == 0 ? "" : "python3 cannot import torch";
}

std::string find_torch_script_from(const std::string& exe_dir) {
  // Relative to the executable's folder, as CMake computed them (src/CMakeLists.txt).
  for (const fs::path& candidate :
       {fs::path(exe_dir) / SDPA_RUNTIME_FROM_BINDIR / kTorchScriptName,
        fs::path(exe_dir) / SDPA_RUNTIME_FROM_BUILD_DIR / kTorchScriptName})
    if (fs::is_regular_file(candidate)) return fs::weakly_canonical(candidate).string();
  throw InputError(fmt::format(
      "--with-torch: {} is neither in {}/{} (installed) nor in {}/{} (source tree); name it with {}",
      kTorchScriptName, exe_dir, SDPA_RUNTIME_FROM_BINDIR, exe_dir, SDPA_RUNTIME_FROM_BUILD_DIR,
      kScriptEnv));
}

std::string find_torch_script() {
  if (const char* path = std::getenv(kScriptEnv); path != nullptr && *path != '\0') {
    if (!fs::is_regular_file(path))
      throw InputError(fmt::format("{}={}: no such file", kScriptEnv, path));
    return path;
  }
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  if (error)
    throw InputError(fmt::format("--with-torch: cannot find sdpa-prof's own folder; name {} with {}",
                                 kTorchScriptName, kScriptEnv));
  return find_torch_script_from(exe.parent_path().string());
}

TorchRun run_torch_paths(const std::vector<Problem>& problems,
                         const std::vector<std::string>& torch_backends, int device, bool keep_records) {
  TorchRun out;
  if (torch_backends.empty()) return out;
  TraceRequest request;
  request.injection_library = find_injection_library();
  request.device = device;
  request.keep_records = keep_records;
  request.keep_stderr = true;
  const std::string script = find_torch_script();
  for (const Problem& p : problems) {
    if (p.paged()) {  // PyTorch's SDPA takes contiguous K and V only
      for (const std::string& backend : torch_backends) {
        CaseResult skipped;
        skipped.backend = backend;
        skipped.problem = p;
        skipped.status = CaseStatus::skipped;
        skipped.reason = paged_kv_unsupported(backend);
        out.cases.push_back(std::move(skipped));
      }
      continue;
    }
    request.command = {"python3", script};
    for (std::string& arg : script_arguments(p, torch_backends))
      request.command.push_back(std::move(arg));
    TraceOutcome traced = run_traced(request);
    if (!traced.refused.empty()) throw InputError(traced.refused);
    for (std::string& note : traced.notes) out.notes.push_back(std::move(note));
    out.stderr_text += traced.stderr_text;
    for (const std::string& backend : torch_backends)
      if (std::none_of(traced.cases.begin(), traced.cases.end(), [&](const CaseResult& c) { return c.backend == backend; })) {
        CaseResult missing;
        missing.backend = backend;
        missing.problem = p;
        missing.status = CaseStatus::failed;
        missing.reason = traced.exit_code != 0
                             ? fmt::format("{} exited with {}: {}", kTorchScriptName, traced.exit_code,
                                           last_line(traced.not_started.empty() ? traced.stderr_text : traced.not_started))
                             : fmt::format("{} reported no result for it", kTorchScriptName);
        traced.cases.push_back(std::move(missing));
      }
    for (CaseResult& c : traced.cases) out.cases.push_back(std::move(c));
    for (ProcessRecords& r : traced.records) out.records.push_back(std::move(r));
  }
  return out;
}

}  // namespace sdpa
