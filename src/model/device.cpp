#include "model/device.h"

#include <fmt/format.h>

namespace sdpa {

std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

std::string gib_text(std::size_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / 1073741824.0); }

}  // namespace sdpa
