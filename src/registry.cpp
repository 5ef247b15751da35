#include "backend.h"
#include "backends/efficient.h"
#include "backends/flash.h"
#include "backends/math.h"
#include "backends/naive.h"

namespace sdpa {
namespace {

BackendEntry not_built(std::string_view name, std::string_view summary, std::string_view dtypes,
                       std::string_view head_dims, std::string_view archs) {
  return BackendEntry{.name = name,
                      .summary = summary,
                      .dtypes = dtypes,
                      .head_dims = head_dims,
                      .archs = archs,
                      .not_built_reason = "not implemented in this version",
                      .unsupported = nullptr,
                      .workspace_bytes = nullptr,
                      .create = nullptr};
}

}  // namespace

std::span<const BackendEntry> backend_registry() {
  static const BackendEntry entries[] = {
      naive_backend_entry(),
      naive_inplace_backend_entry(),
      math_backend_entry(),
      efficient_backend_entry(),
      flash_backend_entry(),
      not_built("cudnn", "cuDNN fused SDPA through the graph API", "bf16, fp16", "cuDNN's",
                "sm_80+"),
  };
  return entries;
}

const BackendEntry* find_backend(std::string_view name) {
  for (const BackendEntry& e : backend_registry())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace sdpa
