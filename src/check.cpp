#include "check.h"

#include <fmt/format.h>

namespace sdpa {

ApiError::ApiError(const char* api, const char* call, const char* file, int line,
                   const std::string& msg)
    : std::runtime_error(fmt::format("{} error at {}:{}: {} failed: {}", api, file, line, call, msg)) {}

void throw_api_error(const char* api, const char* call, const char* file, int line,
                     const std::string& message) {
  throw ApiError(api, call, file, line, message);
}

const char* cublas_status_text(cublasStatus_t status) {
  const char* name = cublasGetStatusName(status);
  return name != nullptr ? name : "unknown cuBLAS status";
}

}  // namespace sdpa
