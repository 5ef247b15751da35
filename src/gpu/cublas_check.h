// cuBLAS's check macro: a failed call throws ApiError with cuBLAS's name for the status.
#pragma once

#include <cublas_v2.h>

#include "gpu/check.h"

namespace sdpa {

const char* cublas_status_text(cublasStatus_t status);

}  // namespace sdpa

#define SDPA_CHECK_CUBLAS(call)                                                          \
  do {                                                                                   \
    const cublasStatus_t sdpa_st_ = (call);                                              \
    if (sdpa_st_ != CUBLAS_STATUS_SUCCESS)                                               \
      ::sdpa::throw_api_error("cuBLAS", #call, __FILE__, __LINE__,                       \
                              ::sdpa::cublas_status_text(sdpa_st_));                     \
  } while (0)
