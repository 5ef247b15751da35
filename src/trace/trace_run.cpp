#include "trace/trace_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <system_error>

#include <fmt/format.h>

#include "gpu/device_query.h"
#include "inject/trace_env.h"
#include "io/input_file.h"
#include "io/record_file.h"
#include "model/case_key.h"
#include "model/errors.h"
#include "model/number_text.h"
#include "model/printable_text.h"
#include "profile/occupancy.h"
#include "profile/launch_findings.h"
#include "profile/op_findings.h"
#include "trace/child_process.h"
#include "trace/program_results.h"
#include "trace/traced_cases.h"

namespace fs = std::filesystem;

namespace sdpa {
namespace {

constexpr const char* kInjectionLibrary = "libsdpa-prof-inject.so";
constexpr const char* kInjectionOverrideEnv = "SDPA_PROF_INJECT_LIBRARY";
// Records kept per process; a program that launches more is reported on the first ones.
constexpr std::size_t kMaxRecordsPerProcess = std::size_t{4} << 20;
constexpr long kMaxStderrBytes = 64 << 10;

// The last `max_bytes` of a file the command wrote; empty when it wrote none.
std::string read_text_tail(const std::string& path, long max_bytes) {
  const InputFile file = open_regular_file(path);
  if (std::fseek(file.get(), 0, SEEK_END) != 0) return "";
  const long size = std::ftell(file.get());
  std::fseek(file.get(), std::max(0L, size - max_bytes), SEEK_SET);
  std::string text(static_cast<std::size_t>(std::min(size, max_bytes)), '\0');
  text.resize(std::fread(text.data(), 1, text.size(), file.get()));
  return text;
}

// The record folder of the trace in progress, for a signal handler to remove: fixed storage.
char g_record_folder[PATH_MAX] = {};
std::atomic<bool> g_record_folder_set{false};

// A private folder for the records, removed with everything in it when the trace is done, and
// by remove_record_folder_from_signal_handler() when a signal ends the tool first.
class RecordFolder {
 public:
  RecordFolder() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        fmt::format("{}/sdpa-prof-trace.XXXXXX", tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
    if (pattern.size() >= PATH_MAX || ::mkdtemp(pattern.data()) == nullptr)
      throw InputError(fmt::format("cannot make a folder for the trace's records ({})", pattern));
    path_ = pattern;
    std::memcpy(g_record_folder, path_.c_str(), path_.size() + 1);
    g_record_folder_set.store(true);
  }
  ~RecordFolder() {
    g_record_folder_set.store(false);
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  RecordFolder(const RecordFolder&) = delete;
  RecordFolder& operator=(const RecordFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The pid a record file is named by ("4242.records"), 0 when the name is not one.
int64_t pid_of_record_file(const std::string& name) {
  const std::string suffix = kRecordFileSuffix;
  if (!name.ends_with(suffix)) return 0;
  const std::string digits = name.substr(0, name.size() - suffix.size());
  if (digits.empty() || digits.size() > 10 || digits[0] == '0' ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  const int64_t pid = std::stoll(digits);
  return pid <= std::numeric_limits<int32_t>::max() ? pid : 0;
}

struct RecordFileName {
  int64_t pid;
  std::string path;
};

// Each process's record file, by pid (the order processes were started, for the usual pids);
// another name in the folder is not a record file of ours, and is said so.
std::vector<RecordFileName> record_files(const std::string& folder, const std::vector<std::string>& ours,
                                         std::vector<std::string>& notes) {
  std::map<int64_t, std::string> by_pid;
  for (const fs::directory_entry& e : fs::directory_iterator(folder)) {
    const std::string name = e.path().filename().string();
    if (std::find(ours.begin(), ours.end(), e.path().string()) != ours.end()) continue;
    if (const int64_t pid = pid_of_record_file(name); pid > 0)
      by_pid.emplace(pid, e.path().string());
    else
      notes.push_back(fmt::format("{} in the record folder is not a record file (<pid>{}): left out",
                                  echo(printable_text(name)), kRecordFileSuffix));
  }
  std::vector<RecordFileName> files;
  for (auto& [pid, path] : by_pid) files.push_back(RecordFileName{pid, path});
  return files;
}

// One process's records; a file that is not one marks that process partial, and the others
// are still reported.
RecordFile read_one_record_file(const RecordFileName& named) {
  RecordFile file;
  try {
    file = read_record_file(named.path, kMaxRecordsPerProcess);
    if (file.pid == named.pid) return file;
    const int64_t header_pid = file.pid;
    file = RecordFile{};
    file.partial_reason =
        fmt::format("{}: its header names pid {}, its file name pid {}", named.path, header_pid, named.pid);
  } catch (const InputError& e) {
    file = RecordFile{};
    file.partial_reason = e.what();
  }
  file.pid = named.pid;
  return file;
}

}  // namespace

void remove_record_folder_from_signal_handler() {
  if (!g_record_folder_set.load()) return;
  const int dir = ::open(g_record_folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  // getdents64 and unlinkat: system calls only, no allocation (opendir is not signal-safe).
  alignas(dirent64) static char entries[8192];
  for (ssize_t got; (got = ::getdents64(dir, entries, sizeof entries)) > 0;)
    for (ssize_t at = 0; at < got;) {
      const auto* e = reinterpret_cast<const dirent64*>(entries + at);
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ::unlinkat(dir, e->d_name, 0);
      at += e->d_reclen;
    }
  ::close(dir);
  ::rmdir(g_record_folder);
}

std::string find_injection_library() {
  if (const char* path = std::getenv(kInjectionOverrideEnv); path != nullptr && *path != '\0') {
    if (!fs::is_regular_file(path))
      throw InputError(fmt::format("{}={}: no such file", kInjectionOverrideEnv, path));
    return fs::absolute(path).string();
  }
  std::error_code error;
  const fs::path exe_dir = fs::read_symlink("/proc/self/exe", error).parent_path();
  for (const fs::path& library : {exe_dir / kInjectionLibrary, exe_dir / SDPA_INJECT_FROM_BINDIR / kInjectionLibrary})
    if (!error && fs::is_regular_file(library)) return fs::weakly_canonical(library).string();
  throw InputError(fmt::format(
      "the injection library {} is neither beside sdpa-prof ({}) nor installed in {}; build it "
      "(target sdpa_inject) or name it with {}",
      kInjectionLibrary, exe_dir.string(), (exe_dir / SDPA_INJECT_FROM_BINDIR).lexically_normal().string(),
      kInjectionOverrideEnv));
}

TraceOutcome run_traced(const TraceRequest& request) {
  if (const char* other = std::getenv("CUDA_INJECTION64_PATH");
      other != nullptr && *other != '\0' && request.injection_library != other)
    throw InputError(fmt::format(
        "CUDA_INJECTION64_PATH is already set ({}): another profiler injects into CUDA programs "
        "here, and trace needs that place; run trace outside it",
        other));
  TraceOutcome out;
  out.info.command = command_line_text(request.command);
  const RecordFolder folder;
  const std::string results_path = folder.path() + "/program-results.json";
  ChildOptions child;
  child.environment = {{"CUDA_INJECTION64_PATH", request.injection_library},
                       {"NVTX_INJECTION64_PATH", request.injection_library},
                       {kTraceDirEnv, folder.path()},
                       {kProgramResultsEnv, results_path}};
  if (request.keep_stderr) child.stderr_path = folder.path() + "/command-stderr.txt";
  out.exit_code = run_child(request.command, child, out.not_started);
  if (request.keep_stderr && out.not_started.empty()) out.stderr_text = read_text_tail(child.stderr_path, kMaxStderrBytes);
  out.info.exit_code = out.exit_code;
  if (!out.not_started.empty()) return out;

  std::vector<RecordFile> files;
  bool any_gpu_work = false;
  for (const RecordFileName& named : record_files(folder.path(), {results_path, child.stderr_path}, out.notes)) {
    files.push_back(read_one_record_file(named));
    const RecordFile& f = files.back();
    any_gpu_work = any_gpu_work || !f.records.kernels.empty() || !f.records.memcpys.empty();
    if (f.error_code == kRecordErrorOtherProfiler && out.refused.empty())
      out.refused =
          fmt::format("process {} of the traced command could not be traced: {}", f.pid, f.error);
  }
  std::optional<ArchLimits> arch;
  int sm_count = 0;
  if (any_gpu_work) {
    DeviceInfo device;
    std::string why;
    if (query_device(request.device, device, why)) {
      out.device = device;
      arch = arch_limits(device.cc_major, device.cc_minor);
      sm_count = device.sm_count;
      if (!arch)
        out.notes.push_back(fmt::format("no occupancy: the calculator does not know sm_{}{}",
                                        device.cc_major, device.cc_minor));
    } else {
      out.notes.push_back(fmt::format("no occupancy: {}", why));
    }
  }
  for (RecordFile& f : files) {
    TracedProcess p = analyze_traced_process(f, arch, sm_count);
    if (!f.error.empty()) {
      p.trace.partial = true;
      p.trace.partial_reason = fmt::format("could not record: {}", f.error);
      out.notes.push_back(fmt::format("process {}: {}", f.pid, p.trace.partial_reason));
    }
    for (CaseResult& c : p.cases) {
      c.source = fmt::format("traced: {}", request.command.front());
      // The same case in two processes: the later one is told apart by its process.
      for (const CaseResult& seen : out.cases)
        if (case_key(seen.backend, seen.problem) == case_key(c.backend, c.problem))
          c.backend += fmt::format("@pid{}", f.pid);
      out.cases.push_back(std::move(c));
    }
    out.info.processes.push_back(std::move(p.trace));
    if (request.keep_records) out.records.push_back(ProcessRecords{f.pid, std::move(f.records)});
  }
  std::error_code ec;
  if (fs::exists(fs::symlink_status(results_path, ec))) {
    try {
      merge_program_results(read_program_results(results_path), out.cases);
    } catch (const InputError& e) {
      out.notes.push_back(fmt::format("the results the command handed over are left out: {}", e.what()));
    }
  }
  add_op_findings(out.cases);  // after the merge: they compare cases, and host times come with it
  add_launch_findings(out.cases);
  return out;
}

}  // namespace sdpa
