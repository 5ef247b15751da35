#include "gpu/check.h"

#include <fmt/format.h>

namespace sdpa {

void throw_api_error(const char* api, const char* call, const char* file, int line,
                     const std::string& message) {
  throw ApiError(api, call, file, line, message);
}

void throw_cudnn_error(const std::string& call, int status, const std::string& detail, std::source_location where) {
  std::string message = cudnn_status_text(status);
  if (!detail.empty()) message += ": " + detail;
  throw_api_error("cuDNN", call.c_str(), where.file_name(), static_cast<int>(where.line()), message);
}

const char* cublas_status_text(cublasStatus_t status) {
  const char* name = cublasGetStatusName(status);
  return name != nullptr ? name : "unknown cuBLAS status";
}

}  // namespace sdpa
