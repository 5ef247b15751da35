// A crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT), in our code or in a library we load (CUPTI,
// cuDNN, the driver), says what the tool was doing and where, instead of dying silently: one line
// naming the signal and the stage, the stack (addresses with their library and offset; addr2line
// reads them), the temporaries removed; then the signal's default action (a core, the exit code).
#pragma once

namespace sdpa {

// Installs the handlers (not under AddressSanitizer, whose own report says more).
void report_crashes();

// Names what the process is doing, for a crash inside it ("starting the counter session"): a
// string literal, until the object is destroyed.
class CrashStage {
 public:
  explicit CrashStage(const char* stage);
  ~CrashStage();
  CrashStage(const CrashStage&) = delete;
  CrashStage& operator=(const CrashStage&) = delete;

 private:
  const char* previous_;
};

}  // namespace sdpa
