// The one error family: every failure reaches main as one of these, and each maps to one exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace sdpa {

enum ExitCode : int {
  kExitOk = 0,
  kExitCaseFailed = 1,  // run: a case failed; compare: a regression
  kExitBadInput = 2,    // flags, presets or files that make no sense
  kExitGpuFailed = 3,   // no usable GPU, or the GPU or a CUDA library failed
};

// Bad input from the user (flags or config): the tool exits with code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The GPU or a CUDA library (CUDA, cuBLAS, cuDNN, CUPTI) failed: exit 3.
class ApiError : public std::runtime_error {
 public:
  ApiError(const char* api, const char* call, const char* file, int line, const std::string& msg);
};

// A backend that learns only while preparing a case that it cannot run it (cuDNN proposes no
// engine for a graph its unsupported() could not rule out without a GPU): the runner skips the case
// with this reason, as if unsupported() had given it. Never reaches main.
class CaseDeclined : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sdpa
