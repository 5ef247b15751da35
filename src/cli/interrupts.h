// Signals. Ctrl-C, SIGTERM and SIGHUP during a sweep: the first asks the sweep to stop after the
// current sample so that what was measured is written; the same signal again within
// kSameRequestWithinNs is the same request, and any later or different one ends the process at once.
// At any other time they end the process as usual, after removing the temporaries of files being
// written (io/atomic_file.h) and the record folder of a trace (trace/trace_run.h).
#pragma once

#include <cstdint>

namespace sdpa {

inline constexpr int64_t kSameRequestWithinNs = 2'000'000'000;

// "SIGINT", "SIGTERM" or "SIGHUP".
const char* stop_signal_name(int signal);

// Installs, for the whole process, the handlers that remove temporaries before dying.
void remove_temporaries_on_signals();

class InterruptGuard {
 public:
  InterruptGuard();  // installs the handlers
  ~InterruptGuard();  // restores the previous ones
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The signal that asked to stop (SIGINT, SIGTERM, SIGHUP), 0 when none has.
  static int signal_seen();
};

}  // namespace sdpa
