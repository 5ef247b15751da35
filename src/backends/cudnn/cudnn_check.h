// cuDNN's check: a failed call throws ApiError with the loaded library's name for the status and
// its last error message.
#pragma once

#include <source_location>
#include <string>

#include "backends/cudnn/cudnn_library.h"

namespace sdpa {

// The one way a cuDNN failure is raised: the status's text, cuDNN's last message, and `detail`.
[[noreturn]] void throw_cudnn_error(const std::string& call, int status, const std::string& detail = "",
                                    std::source_location where = std::source_location::current());

}  // namespace sdpa

#define SDPA_CHECK_CUDNN(call)                                                           \
  do {                                                                                   \
    const cudnnStatus_t sdpa_cs_ = (call);                                               \
    if (sdpa_cs_ != CUDNN_STATUS_SUCCESS)                                                \
      ::sdpa::throw_cudnn_error(#call, static_cast<int>(sdpa_cs_));                      \
  } while (0)
