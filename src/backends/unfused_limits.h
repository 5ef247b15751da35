// Size limits shared by the unfused backends (row-per-block softmax, 32-bit cuBLAS sizes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gpu/device_query.h"
#include "model/problem.h"

namespace sdpa {

inline std::optional<std::string> unfused_unsupported(const Problem& p, const DeviceInfo&) {
  if (p.batch * p.heads * p.seq_q > INT32_MAX)
    return "more than 2^31 - 1 score rows (B * H * Sq) for the row-per-block softmax";
  if (p.seq_kv > INT32_MAX || p.seq_q * p.group_size() > INT32_MAX)
    return "a GEMM dimension exceeds cuBLAS's 32-bit sizes";
  return std::nullopt;
}

}  // namespace sdpa
