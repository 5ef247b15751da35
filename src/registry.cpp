#include "backend.h"
#include "backends/cudnn.h"
#include "backends/efficient.h"
#include "backends/flash.h"
#include "backends/math.h"
#include "backends/naive.h"

namespace sdpa {

std::span<const BackendEntry> backend_registry() {
  static const BackendEntry entries[] = {
      naive_backend_entry(),
      naive_inplace_backend_entry(),
      math_backend_entry(),
      efficient_backend_entry(),
      flash_backend_entry(),
      cudnn_backend_entry(),
  };
  return entries;
}

const BackendEntry* find_backend(std::string_view name) {
  for (const BackendEntry& e : backend_registry())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace sdpa
