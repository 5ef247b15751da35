// One family of check macros: every CUDA-library call is wrapped, and a failure throws
// ApiError carrying file, line, the call's text and the library's own message. The CUDA runtime's
// check is here; each library's beside the code that loads it (gpu/cublas_check.h,
// profile/cupti_check.h, backends/cudnn/cudnn_check.h), so that a header includes only its own.
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "model/errors.h"

namespace sdpa {

[[noreturn]] void throw_api_error(const char* api, const char* call, const char* file, int line,
                                  const std::string& message);

}  // namespace sdpa

#define SDPA_CHECK_CUDA(call)                                                            \
  do {                                                                                   \
    const cudaError_t sdpa_err_ = (call);                                                \
    if (sdpa_err_ != cudaSuccess)                                                        \
      ::sdpa::throw_api_error("CUDA", #call, __FILE__, __LINE__,                         \
                              std::string(cudaGetErrorName(sdpa_err_)) + ": " +          \
                                  cudaGetErrorString(sdpa_err_));                        \
  } while (0)

// After a kernel launch: catches bad launch configurations at the call site.
#define SDPA_CHECK_LAUNCH() SDPA_CHECK_CUDA(cudaGetLastError())
