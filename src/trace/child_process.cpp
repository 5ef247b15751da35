#include "trace/child_process.h"

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <iterator>
#include <cstring>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "model/errors.h"

extern char** environ;

namespace sdpa {
namespace {

std::atomic<pid_t> g_child{0};
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};

void forward_signal(int signal) {
  if (const pid_t child = g_child.load(); child > 0) ::kill(child, signal);
}

// SIGINT, SIGTERM and SIGHUP go to the child while it runs (a closed terminal must not leave it
// running); the previous handlers come back after.
class SignalForwarding {
 public:
  SignalForwarding() {
    struct sigaction action {};
    action.sa_handler = &forward_signal;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &action, &previous_[i]);
  }
  ~SignalForwarding() {
    for (std::size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &previous_[i], nullptr);
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

 private:
  struct sigaction previous_[std::size(kForwarded)] {};
};

std::vector<std::string> environment_with(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::map<std::string, std::string> overrides(extra.begin(), extra.end());
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (overrides.count(name) == 0) env.push_back(entry);
  }
  for (const auto& [name, value] : overrides) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (std::string& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace

int run_child(const std::vector<std::string>& command, const ChildOptions& options,
              std::string& not_started) {
  if (command.empty()) throw InputError("no command to run");
  std::vector<std::string> args = command;
  std::vector<std::string> env = environment_with(options.environment);
  std::vector<char*> argv = pointers(args), envp = pointers(env);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (options.quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  } else if (!options.stderr_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, options.stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
  }
  const SignalForwarding forwarding;
  // The signals wait, blocked, until the child's pid is known: one that the child sends at once
  // (kill -HUP $PPID) is then forwarded, not lost. The child starts with the mask we had.
  sigset_t forwarded, before;
  sigemptyset(&forwarded);
  for (const int sig : kForwarded) sigaddset(&forwarded, sig);
  ::pthread_sigmask(SIG_BLOCK, &forwarded, &before);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setsigmask(&attributes, &before);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned == 0) g_child.store(pid);
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (spawned != 0) {
    const bool missing = spawned == ENOENT || spawned == ENOTDIR;
    not_started =
        fmt::format("{}: {}", command[0], missing ? "command not found" : std::strerror(spawned));
    return missing ? 127 : 126;
  }
  int status = 0;
  pid_t waited = 0;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  g_child.store(0);
  if (waited < 0)
    throw std::runtime_error(
        fmt::format("waiting for {} failed: {}", command[0], std::strerror(errno)));
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace sdpa
