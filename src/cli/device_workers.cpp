#include "cli/device_workers.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/interrupts.h"
#include "cli/output_writers.h"
#include "gpu/device_query.h"
#include "model/errors.h"
#include "report/report.h"
#include "report/result_sets.h"

extern char** environ;

namespace fs = std::filesystem;

namespace sdpa {
namespace {

// Options whose value names a file the parent writes (or a choice it makes): not the workers'.
constexpr const char* kParentOptions[] = {"--devices", "--json", "--csv",     "--md",
                                          "--html",    "--samples", "--timeline", "--timeline-max-mb"};

bool is_parent_option(const std::string& arg, bool& takes_next) {
  for (const char* option : kParentOptions) {
    const std::string name = option;
    if (arg == name) {
      takes_next = true;
      return true;
    }
    if (arg.rfind(name + "=", 0) == 0) {
      takes_next = false;
      return true;
    }
  }
  return false;
}

struct Worker {
  int device = 0;
  pid_t pid = 0;
  int stderr_fd = -1;
  std::string pending;  // a line not yet ended
  std::string part_path;
  std::optional<int> exit_code;
};

// Starts one worker, its stdout to /dev/null (the parent prints the table) and its stderr to a
// pipe the parent reads.
void start_worker(Worker& w, const std::vector<std::string>& arguments) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw ApiError("POSIX", "pipe2", __FILE__, __LINE__, std::strerror(errno));
  std::error_code error;
  const std::string exe = fs::read_symlink("/proc/self/exe", error).string();
  if (error)
    throw ApiError("POSIX", "readlink /proc/self/exe", __FILE__, __LINE__, "this program's own path, to start the workers");
  std::vector<std::string> args{exe};
  args.insert(args.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  const int spawned = ::posix_spawn(&w.pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    throw ApiError("POSIX", "posix_spawn", __FILE__, __LINE__,
                   fmt::format("the worker for GPU {}: {}", w.device, std::strerror(spawned)));
  }
  w.stderr_fd = pipe_fds[0];
}

// Passes on what a worker said, line by line, each prefixed with its GPU. Returns false at its end.
bool pass_on_output(Worker& w, std::ostream& progress) {
  char buffer[4096];
  const ssize_t n = ::read(w.stderr_fd, buffer, sizeof buffer);
  if (n < 0 && errno == EINTR) return true;
  if (n > 0) w.pending.append(buffer, static_cast<std::size_t>(n));
  for (std::size_t end; (end = w.pending.find('\n')) != std::string::npos; w.pending.erase(0, end + 1))
    progress << fmt::format("[gpu {}] {}\n", w.device, w.pending.substr(0, end));
  if (n > 0) return true;
  if (!w.pending.empty()) progress << fmt::format("[gpu {}] {}\n", w.device, w.pending);
  w.pending.clear();
  ::close(w.stderr_fd);
  w.stderr_fd = -1;
  return false;
}

void reap(Worker& w) {
  if (w.exit_code || w.pid <= 0) return;
  int status = 0;
  if (::waitpid(w.pid, &status, WNOHANG) != w.pid) return;
  w.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// Runs the workers to their end: their output passed on, a signal passed to them all once, and a
// worker that fails (not 0, not 1 for a failed case) stopping the others. Returns why the run was
// cut short, empty when every worker finished.
std::string run_workers(std::vector<Worker>& workers, std::ostream& progress) {
  const InterruptGuard interrupts;
  std::string stopped;
  bool told_to_stop = false;
  const auto stop_all = [&](int signal) {
    if (told_to_stop) return;
    told_to_stop = true;
    for (Worker& w : workers)
      if (!w.exit_code) ::kill(w.pid, signal);
  };
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Worker*> open;
    for (Worker& w : workers)
      if (w.stderr_fd >= 0) {
        fds.push_back({w.stderr_fd, POLLIN, 0});
        open.push_back(&w);
      }
    if (!fds.empty() && ::poll(fds.data(), fds.size(), 200) > 0)
      for (std::size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents != 0) pass_on_output(*open[i], progress);
    for (Worker& w : workers) {
      reap(w);
      if (w.exit_code && *w.exit_code != kExitOk && *w.exit_code != kExitCaseFailed && !told_to_stop) {
        stopped = fmt::format("the worker on GPU {} ended with exit code {}", w.device, *w.exit_code);
        stop_all(SIGTERM);
      }
    }
    if (const int signal = InterruptGuard::signal_seen(); signal != 0 && !told_to_stop) {
      stopped = fmt::format("interrupted by {}", stop_signal_name(signal));
      stop_all(signal);
    }
    const bool all_done = std::all_of(workers.begin(), workers.end(),
                                      [](const Worker& w) { return w.exit_code && w.stderr_fd < 0; });
    if (all_done) return stopped;
    if (fds.empty()) ::usleep(50'000);  // outputs closed, processes not yet reaped
  }
}

// The GPUs --devices names; empty, with why in `error`, when "all" finds none.
std::vector<int> devices_to_use(const CliOptions& o, std::string& error) {
  if (!o.all_devices) return o.devices;
  const int count = visible_device_count(error);
  std::vector<int> all(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) all[static_cast<std::size_t>(i)] = i;
  return all;
}

}  // namespace

std::vector<std::string> worker_arguments(const std::vector<std::string>& given, int device, int index,
                                          int count, const std::string& part_path) {
  std::vector<std::string> args;
  for (std::size_t i = 0; i < given.size(); ++i) {
    bool takes_next = false;
    if (is_parent_option(given[i], takes_next)) {
      i += takes_next ? 1 : 0;
      continue;
    }
    args.push_back(given[i]);
  }
  for (const std::string& extra : {std::string("--device"), std::to_string(device), std::string("--shard"),
                                   fmt::format("{}/{}", index, count), std::string("--json"), part_path})
    args.push_back(extra);
  return args;
}

int run_on_devices(const CliOptions& o, std::ostream& out, std::ostream& progress) {
  std::string error;
  const std::vector<int> devices = devices_to_use(o, error);
  if (devices.empty()) {
    progress << "sdpa-prof: " << error << "\n";
    return kExitGpuFailed;
  }
  RunReport merged;
  const std::vector<OutputWriter> outputs = report_writers(o, merged);
  const char* tmp = std::getenv("TMPDIR");
  std::string folder = fmt::format("{}/sdpa-prof-devices.XXXXXX", tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
  if (::mkdtemp(folder.data()) == nullptr) throw InputError(fmt::format("cannot make a folder for the workers' parts ({})", folder));
  struct RemoveFolder {
    std::string path;
    ~RemoveFolder() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } remove_folder{folder};

  const int count = static_cast<int>(devices.size());
  std::vector<Worker> workers(devices.size());
  progress << fmt::format("{} workers, one per GPU: {}\n", count, fmt::join(devices, ", "));
  for (int k = 1; k <= count; ++k) {
    Worker& w = workers[static_cast<std::size_t>(k - 1)];
    w.device = devices[static_cast<std::size_t>(k - 1)];
    w.part_path = fmt::format("{}/part-{}.json", folder, k);
    start_worker(w, worker_arguments(o.arguments, w.device, k, count, w.part_path));
  }
  const std::string stopped = run_workers(workers, progress);

  std::vector<NamedReport> parts;
  for (const Worker& w : workers)
    if (fs::exists(w.part_path)) parts.push_back({fmt::format("GPU {}'s part", w.device), read_report_file(w.part_path)});
  if (parts.empty()) {
    progress << "sdpa-prof: no worker wrote a result" << (stopped.empty() ? "" : ": " + stopped) << "\n";
    return kExitGpuFailed;
  }
  merged = merge_reports(parts);
  merged.environment.command_line = o.command_line;
  if (!stopped.empty()) {
    merged.partial = true;
    merged.partial_reason = merged.partial_reason.empty() ? stopped : stopped + "; " + merged.partial_reason;
  }
  out << format_table(merged, o.table);
  if (o.kernels) out << format_kernels(merged, o.table.style);
  if (o.ops) out << format_ops(merged, o.table.style);
  out.flush();
  write_all(outputs, progress);
  if (const int signal = InterruptGuard::signal_seen(); signal != 0) return 128 + signal;
  if (merged.partial) return kExitGpuFailed;
  return merged.any_failed() ? kExitCaseFailed : kExitOk;
}

}  // namespace sdpa
