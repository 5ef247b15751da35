#include "backends/cudnn/cudnn_check.h"

#include "gpu/check.h"

namespace sdpa {

void throw_cudnn_error(const std::string& call, int status, const std::string& detail, std::source_location where) {
  std::string message = cudnn_status_text(status);
  if (!detail.empty()) message += ": " + detail;
  throw_api_error("cuDNN", call.c_str(), where.file_name(), static_cast<int>(where.line()), message);
}

}  // namespace sdpa
