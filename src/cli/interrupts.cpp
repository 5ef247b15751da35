#include "cli/interrupts.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <ctime>
#include <iterator>

#include "io/atomic_file.h"
#include "trace/trace_run.h"

namespace sdpa {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

std::atomic<int> g_signal{0};
std::atomic<int64_t> g_first_signal_ns{0};
struct sigaction g_previous[3] {};

int64_t monotonic_ns() {  // clock_gettime is async-signal-safe
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

extern "C" void on_fatal_signal(int sig) {
  remove_temporaries_from_signal_handler();
  remove_record_folder_from_signal_handler();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// The first signal asks to stop. The same signal again within the grace period is the same
// request: `timeout` signals the process and then its group, a terminal's Ctrl-C reaches every
// process of the job. Any other signal, or one after the grace period, ends the process at once;
// the finished cases are already in the journal (--json).
extern "C" void on_stop_signal(int sig) {
  const int64_t now = monotonic_ns();
  int none = 0;
  if (g_signal.compare_exchange_strong(none, sig)) {
    g_first_signal_ns.store(now);
    return;
  }
  if (none == sig && now - g_first_signal_ns.load() < kSameRequestWithinNs) return;
  remove_temporaries_from_signal_handler();
  remove_record_folder_from_signal_handler();
  _exit(128 + sig);
}

// A signal the parent process ignores (nohup's SIGHUP) stays ignored.
void install(void (*handler)(int), struct sigaction* previous) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
    struct sigaction current {};
    sigaction(kStopSignals[i], nullptr, &current);
    if (previous != nullptr) previous[i] = current;
    if (current.sa_handler != SIG_IGN) sigaction(kStopSignals[i], &action, nullptr);
  }
}

}  // namespace

const char* stop_signal_name(int signal) {
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "SIGHUP";
}

void remove_temporaries_on_signals() { install(on_fatal_signal, nullptr); }

InterruptGuard::InterruptGuard() { install(on_stop_signal, g_previous); }

InterruptGuard::~InterruptGuard() {
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) sigaction(kStopSignals[i], &g_previous[i], nullptr);
}

int InterruptGuard::signal_seen() { return g_signal.load(); }

}  // namespace sdpa
