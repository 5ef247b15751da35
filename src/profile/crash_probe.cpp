#include "profile/crash_probe.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace sdpa {

std::optional<std::string> dies_in_a_child(const std::function<void()>& work, int timeout_ms) {
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = ::fork();
  if (pid < 0) return fmt::format("cannot start a probe process: {}", std::strerror(errno));
  if (pid == 0) {
    // The child dies as the signal would kill it, without the parent's crash report.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::signal(sig, SIG_DFL);
    work();
    ::_exit(0);  // no atexit handlers or destructors of the parent's objects
  }
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 10) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return fmt::format("lost the probe process: {}", std::strerror(errno));
    if (waited_ms >= timeout_ms) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return fmt::format("did not finish within {:g} s", timeout_ms / 1000.0);
    }
    ::usleep(10'000);
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return fmt::format("crashed with SIG{} ({})", sigabbrev_np(sig) != nullptr ? sigabbrev_np(sig) : "?",
                       strsignal(sig));
  }
  return std::nullopt;
}

}  // namespace sdpa
