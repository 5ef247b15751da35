#include "backends/cudnn.h"

#ifdef SDPA_HAVE_CUDNN
#include "backends/cudnn/cudnn_backend.h"
#endif

namespace sdpa {

const BackendEntry& cudnn_backend_entry() {
  static const BackendEntry entry{
      .name = "cudnn",
      .summary = "cuDNN's fused attention through the backend graph API, plan built once and cached",
      .dtypes = "bf16, fp16",
      .head_dims = "x8 to 256",
      .archs = "sm_80+",
#ifdef SDPA_HAVE_CUDNN
      .not_built_reason = "",
      .no_backward_reason = "",  // cuDNN's fused backward (sdpa_backward_graph.h)
      .unsupported = cudnn_unsupported,
      .workspace_bytes = cudnn_workspace_bytes,
      .create = create_cudnn_backend,
      .variants = cudnn_engine_variants,
      .pytorch_path = "cudnn",
      .reads_paged_kv = true,  // through cuDNN's paged cache load (cudnn/paged_kv_graph.h)
#else
#ifdef SDPA_CUDNN_TURNED_OFF
      .not_built_reason = "the build turned cuDNN off (-DSDPA_WITH_CUDNN=OFF)",
#else
      .not_built_reason = "cuDNN 9 headers (cudnn_graph.h) were not found at build time",
#endif
      .unsupported = nullptr,
      .workspace_bytes = nullptr,
      .create = nullptr,
#endif
  };
  return entry;
}

}  // namespace sdpa
