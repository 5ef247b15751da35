#include "backends/efficient.h"

#include "backends/fused_kernel.h"
#include "efficient_fwd.h"

namespace sdpa {

const BackendEntry& efficient_backend_entry() {
  static const BackendEntry entry = fused_backend_entry<kEfficientForward>(
      "efficient",
      "fused, memory-efficient design: 2x2 warp tiles, row maxima shared through shared memory, "
      "P staged in shared memory between the GEMMs");
  return entry;
}

}  // namespace sdpa
