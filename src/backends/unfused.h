// What the unfused backends (naive, naive-inplace, math) share: their size limits (row-per-block
// softmax, 32-bit cuBLAS sizes) and the shape of their registry entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backends/backend.h"
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

inline BackendEntry unfused_backend_entry(std::string_view name, std::string_view summary,
                                          std::size_t (*workspace_bytes)(const Problem&),
                                          std::unique_ptr<Backend> (*create)(const std::string&)) {
  return {
      .name = name,
      .summary = summary,
      .dtypes = "bf16, fp16",
      .head_dims = "any",
      .archs = "sm_80+",
      .not_built_reason = "",
      .unsupported = unfused_unsupported,
      .workspace_bytes = workspace_bytes,
      .create = create,
      .pytorch_path = name,
  };
}

}  // namespace sdpa
