#include "gpu/check.h"

namespace sdpa {

void throw_api_error(const char* api, const char* call, const char* file, int line,
                     const std::string& message) {
  throw ApiError(api, call, file, line, message);
}

}  // namespace sdpa
