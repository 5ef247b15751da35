// Ctrl-C and SIGTERM during a sweep: the first signal asks the sweep to stop after the current
// sample so that what was measured is written; a second one ends the process at once.
#pragma once

namespace sdpa {

class InterruptGuard {
 public:
  InterruptGuard();  // installs the handlers
  ~InterruptGuard();  // restores the previous ones
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The signal that asked to stop (SIGINT, SIGTERM), 0 when none has.
  static int signal_seen();
};

}  // namespace sdpa
