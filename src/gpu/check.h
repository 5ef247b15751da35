// One family of check macros: every CUDA-library call is wrapped, and a failure throws
// ApiError carrying file, line, the call's text and the library's own message.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cupti_result.h>

#include "model/errors.h"

namespace sdpa {


[[noreturn]] void throw_api_error(const char* api, const char* call, const char* file, int line,
                                  const std::string& message);

const char* cublas_status_text(cublasStatus_t status);
// CUPTI is loaded at run time (profile/cupti_library.cpp): the text comes from the loaded library.
const char* cupti_result_text(CUptiResult result);
// cuDNN is loaded at run time (cudnn/cudnn_library.cpp): the status's name from the loaded library,
// then its last error message. Takes the status as int so this header needs no cuDNN headers.
std::string cudnn_status_text(int status);
// The one way a cuDNN failure is raised: the status's text, cuDNN's last message, and `detail`.
[[noreturn]] void throw_cudnn_error(const std::string& call, int status, const std::string& detail = "",
                                    std::source_location where = std::source_location::current());

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

#define SDPA_CHECK_CUBLAS(call)                                                          \
  do {                                                                                   \
    const cublasStatus_t sdpa_st_ = (call);                                              \
    if (sdpa_st_ != CUBLAS_STATUS_SUCCESS)                                               \
      ::sdpa::throw_api_error("cuBLAS", #call, __FILE__, __LINE__,                       \
                              ::sdpa::cublas_status_text(sdpa_st_));                     \
  } while (0)

#define SDPA_CHECK_CUPTI(call)                                                           \
  do {                                                                                   \
    const CUptiResult sdpa_cr_ = (call);                                                 \
    if (sdpa_cr_ != CUPTI_SUCCESS)                                                       \
      ::sdpa::throw_api_error("CUPTI", #call, __FILE__, __LINE__,                        \
                              ::sdpa::cupti_result_text(sdpa_cr_));                      \
  } while (0)

#define SDPA_CHECK_CUDNN(call)                                                           \
  do {                                                                                   \
    const cudnnStatus_t sdpa_cs_ = (call);                                               \
    if (sdpa_cs_ != CUDNN_STATUS_SUCCESS)                                                \
      ::sdpa::throw_cudnn_error(#call, static_cast<int>(sdpa_cs_));                      \
  } while (0)
