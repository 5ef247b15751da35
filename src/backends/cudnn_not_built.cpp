#include "backends/cudnn.h"
#include "cudnn/engine_sweep.h"
#include "sweep.h"

namespace sdpa {

const BackendEntry& cudnn_backend_entry() {
  static const BackendEntry entry{
      .name = "cudnn",
      .summary =
          "cuDNN's fused attention through the backend graph API, plan built once and cached",
      .dtypes = "bf16, fp16",
      .head_dims = "x8 to 256",
      .archs = "sm_80+",
      .not_built_reason = "cuDNN 9 headers (cudnn_graph.h) were not found at build time",
      .unsupported = nullptr,
      .workspace_bytes = nullptr,
      .create = nullptr,
  };
  return entry;
}

int time_every_cudnn_engine(const Problem&, uint64_t, const TimingOptions&, std::ostream&) {
  throw InputError("--cudnn-engines: this sdpa-prof was built without cuDNN's headers");
}

}  // namespace sdpa
