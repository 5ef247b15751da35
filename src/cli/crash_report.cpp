#include "cli/crash_report.h"

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <iterator>

#include "io/atomic_file.h"
#include "trace/trace_run.h"

namespace sdpa {
namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

std::atomic<const char*> g_stage{nullptr};

// write(2) only: the handler may run with the heap or stdio broken.
void say(const char* text) {
  for (std::size_t left = std::strlen(text); left > 0;) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV (invalid memory access)";
    case SIGBUS: return "SIGBUS (bus error)";
    case SIGILL: return "SIGILL (illegal instruction)";
    case SIGFPE: return "SIGFPE (arithmetic error)";
    default: return "SIGABRT (aborted)";
  }
}

extern "C" void on_crash(int sig) {
  say("\nsdpa-prof: crashed with ");
  say(signal_name(sig));
  if (const char* stage = g_stage.load(); stage != nullptr) {
    say(" while ");
    say(stage);
  }
  say(". This is a bug; please report it with the stack below.\n");
  void* frames[64];
  const int n = ::backtrace(frames, static_cast<int>(std::size(frames)));
  ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
  remove_temporaries_from_signal_handler();
  remove_record_folder_from_signal_handler();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void report_crashes() {
#if defined(__SANITIZE_ADDRESS__)
  return;
#else
  // backtrace() loads libgcc on its first call, which must not happen inside the handler.
  void* warm[1];
  (void)::backtrace(warm, 1);
  // A stack of its own: a stack overflow still reaches the handler.
  static char alternate_stack[64 * 1024];
  stack_t stack{};
  stack.ss_sp = alternate_stack;
  stack.ss_size = sizeof(alternate_stack);
  ::sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_handler = on_crash;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int sig : kCrashSignals) ::sigaction(sig, &action, nullptr);
#endif
}

CrashStage::CrashStage(const char* stage) : previous_(g_stage.exchange(stage)) {}
CrashStage::~CrashStage() { g_stage.store(previous_); }

}  // namespace sdpa
