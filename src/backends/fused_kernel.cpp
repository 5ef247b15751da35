#include "backends/fused_kernel.h"

#include <climits>

#include "gpu/problem_shape.h"
#include "gpu/check.h"

namespace sdpa {
namespace {

class FusedBackend final : public Backend {
 public:
  explicit FusedBackend(const FusedKernel& kernel) : kernel_(kernel) {}

  void prepare(const Problem& problem, cudaStream_t) override {
    shape_ = attention_shape(problem);
    dtype_ = problem.dtype;
  }

  void run(const AttentionTensors& t, cudaStream_t stream) override {
    SDPA_CHECK_CUDA(kernel_.launch(dtype_, shape_, t.q, t.k, t.v, t.o, stream));
  }

 private:
  FusedKernel kernel_;
  AttentionShape shape_{};
  DType dtype_ = DType::bf16;
};

}  // namespace

std::unique_ptr<Backend> make_fused_backend(const FusedKernel& kernel) {
  return std::make_unique<FusedBackend>(kernel);
}

std::optional<std::string> fused_unsupported(const FusedKernel& kernel, const Problem& p,
                                             const DeviceInfo& device) {
  if (!kernel.supports_head_dim(p.head_dim))
    return "head dim " + std::to_string(p.head_dim) +
           " not built: the kernel's swizzled tiles need a multiple of 64 and only 64 and 128 are "
           "instantiated";
  if (device.arch() < 80) return "needs sm_80 or newer (mma.sync m16n8k16 with bf16, cp.async)";
  const int smem = kernel.smem_bytes(p.head_dim);
  if (device.shared_per_block_optin < static_cast<std::size_t>(smem))
    return "needs " + std::to_string(smem / 1024) + " KB of shared memory per block, the device has " +
           std::to_string(device.shared_per_block_optin / 1024);
  if (p.seq_q > INT_MAX || p.seq_kv > INT_MAX) return "sequence longer than 2^31 - 1";
  if (p.heads > 65535 || p.batch > 65535) return "more than 65535 heads or batches (grid y / z)";
  return std::nullopt;
}

}  // namespace sdpa
