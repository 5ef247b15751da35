#include "backends/efficient.h"

#include <climits>
#include <string>

#include "check.h"
#include "efficient_fwd.h"

namespace sdpa {
namespace {

AttentionShape attention_shape(const Problem& p) {
  return AttentionShape{.batch = p.batch,
                        .heads = p.heads,
                        .kv_heads = p.kv_heads,
                        .seq_q = p.seq_q,
                        .seq_kv = p.seq_kv,
                        .head_dim = p.head_dim,
                        .causal = p.causal,
                        .scale = static_cast<float>(p.softmax_scale())};
}

class EfficientBackend final : public Backend {
 public:
  void prepare(const Problem& problem, cudaStream_t) override {
    shape_ = attention_shape(problem);
    dtype_ = problem.dtype;
  }

  void run(const AttentionTensors& t, cudaStream_t stream) override {
    SDPA_CHECK_CUDA(launch_efficient_forward(dtype_, shape_, t.q, t.k, t.v, t.o, stream));
  }

 private:
  AttentionShape shape_{};
  DType dtype_ = DType::bf16;
};

std::optional<std::string> efficient_unsupported(const Problem& p, const DeviceInfo& device) {
  if (!efficient_forward_supports_head_dim(p.head_dim))
    return "head dim " + std::to_string(p.head_dim) +
           " not built: the kernel's swizzled tiles need a multiple of 64 and only 64 and 128 are "
           "instantiated";
  if (device.arch() < 80) return "needs sm_80 or newer (mma.sync m16n8k16 with bf16, cp.async)";
  const int smem = efficient_forward_smem_bytes(p.head_dim);
  if (device.shared_per_block_optin < static_cast<std::size_t>(smem))
    return "needs " + std::to_string(smem / 1024) +
           " KB of shared memory per block, the device has " +
           std::to_string(device.shared_per_block_optin / 1024);
  if (p.seq_q > INT_MAX || p.seq_kv > INT_MAX) return "sequence longer than 2^31 - 1";
  if (p.heads > 65535 || p.batch > 65535) return "more than 65535 heads or batches (grid y / z)";
  return std::nullopt;
}

std::size_t efficient_workspace(const Problem&) {
  return 0;
}

}  // namespace

const BackendEntry& efficient_backend_entry() {
  static const BackendEntry entry{
      .name = "efficient",
      .summary =
          "fused, memory-efficient design: 2x2 warp tiles, row maxima shared through "
          "shared memory, P staged in shared memory between the GEMMs",
      .dtypes = "bf16, fp16",
      .head_dims = "64, 128",
      .archs = "sm_80+",
      .not_built_reason = "",
      .unsupported = efficient_unsupported,
      .workspace_bytes = efficient_workspace,
      .create = [] { return std::unique_ptr<Backend>(new EfficientBackend()); },
  };
  return entry;
}

}  // namespace sdpa
