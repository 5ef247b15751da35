#include "model/errors.h"

#include <fmt/format.h>

namespace sdpa {

ApiError::ApiError(const char* api, const char* call, const char* file, int line,
                   const std::string& msg)
    : std::runtime_error(fmt::format("{} error at {}:{}: {} failed: {}", api, file, line, call, msg)) {}

}  // namespace sdpa
