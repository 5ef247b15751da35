#include "backends/fused_kernel.h"

#include <fmt/format.h>

#include "gpu/check.h"
#include "gpu/device_buffer.h"
#include "gpu/problem_shape.h"
#include "model/errors.h"

namespace sdpa {
namespace {

class FusedBackend final : public Backend {
 public:
  explicit FusedBackend(const FusedForwardKernel& kernel) : kernel_(kernel) {}

  void prepare(const Problem& problem, cudaStream_t stream) override {
    shape_ = attention_shape(problem);
    dtype_ = problem.dtype;
    // A variant whose kernel has no backward (flash3's decode) under a backend that has one.
    if (problem.has_backward() && kernel_.launch_backward == nullptr)
      throw CaseDeclined(fmt::format("this variant's kernel {}", kNoBackwardYet));
    if (problem.has_backward()) {
      lse_ = DeviceBuffer(static_cast<std::size_t>(shape_.batch * shape_.heads * shape_.seq_q) * sizeof(float));
      backward_workspace_ =
          DeviceBuffer(static_cast<std::size_t>(fused_backward_workspace_floats(shape_)) * sizeof(float));
    }
    if (kernel_.workspace_bytes == nullptr) return;
    workspace_ = DeviceBuffer(kernel_.workspace_bytes(shape_));
    if (workspace_.bytes() > 0)
      SDPA_CHECK_CUDA(cudaMemsetAsync(workspace_.get(), 0, workspace_.bytes(), stream));
  }

  // With a backward to follow, the forward also writes each row's statistics (lse_).
  void run(const AttentionTensors& t, cudaStream_t stream) override {
    SDPA_CHECK_CUDA(kernel_.launch({dtype_, shape_, t.q, t.k, t.v, t.o, stream, workspace_.get(),
                                    workspace_.bytes(), t.paged, lse_.as<float>()}));
  }

  void backward(const AttentionTensors& t, const GradientTensors& g, cudaStream_t stream) override {
    SDPA_CHECK_CUDA(kernel_.launch_backward({dtype_, shape_, t.q, t.k, t.v, t.o, g.d_out, lse_.as<float>(),
                                             backward_workspace_.as<float>(), g.dq, g.dk, g.dv, stream}));
  }

 private:
  const FusedForwardKernel& kernel_;
  AttentionShape shape_{};
  DType dtype_ = DType::bf16;
  DeviceBuffer workspace_;
  DeviceBuffer lse_;                 // the forward's row statistics, for the backward
  DeviceBuffer backward_workspace_;  // delta and the dQ accumulator
};

// "64, 128" with sep ", ", or "64 and 128" with last_sep " and ".
std::string join_head_dims(const FusedKernelLimits& limits, const char* sep, const char* last_sep) {
  std::string out;
  for (std::size_t i = 0; i < limits.head_dims.size(); ++i) {
    if (i > 0) out += i + 1 == limits.head_dims.size() ? last_sep : sep;
    out += std::to_string(limits.head_dims[i].head_dim);
  }
  return out;
}

std::optional<std::string> shape_reason(FusedLimit broken, const FusedKernelLimits& limits,
                                        int64_t head_dim) {
  switch (broken) {
    case FusedLimit::none:
      return std::nullopt;
    case FusedLimit::head_dim:
      return fmt::format("head dim {} not built: {} and only {} are instantiated", head_dim,
                         limits.head_dim_rule, join_head_dims(limits, ", ", " and "));
    case FusedLimit::empty:
      return "an empty sequence or no key/value heads";
    case FusedLimit::head_groups:
      return "the key/value heads do not divide the query heads";
    case FusedLimit::seq_len:
      return "sequence longer than 2^31 - 1";
    case FusedLimit::grid:
      return fmt::format("more than {} heads or batches (grid y / z)", limits.max_grid_yz);
  }
  return std::nullopt;
}

// A paged problem the kernel cannot read (the registry skips kernels that read no pages at all).
std::optional<std::string> paged_reason(const FusedKernelLimits& limits, const Problem& p) {
  switch (broken_paged_limit(limits, attention_shape(p), p.page_size)) {
    case FusedPagedLimit::none:
      return std::nullopt;
    case FusedPagedLimit::not_read:
      return "reads no paged K/V cache";
    case FusedPagedLimit::seq_q:
      return fmt::format(
          "reads a paged K/V cache only in its decode kernel, for at most {} queries; Sq is {}",
          limits.paged_max_seq_q, p.seq_q);
    case FusedPagedLimit::page_size:
      return fmt::format(
          "reads pages whose size divides its {}-key block or is a multiple of it; the page "
          "size is {}",
          limits.paged_key_block, p.page_size);
  }
  return std::nullopt;
}

}  // namespace

std::unique_ptr<Backend> make_fused_backend(const FusedForwardKernel& kernel) {
  return std::make_unique<FusedBackend>(kernel);
}

std::size_t fused_workspace_bytes(const FusedForwardKernel& kernel, const Problem& p) {
  const AttentionShape shape = attention_shape(p);
  std::size_t bytes = kernel.workspace_bytes == nullptr ? 0 : kernel.workspace_bytes(shape);
  if (p.has_backward() && kernel.launch_backward != nullptr)
    bytes += static_cast<std::size_t>(shape.batch * shape.heads * shape.seq_q +
                                      fused_backward_workspace_floats(shape)) * sizeof(float);
  return bytes;
}

std::optional<std::string> fused_unsupported(const FusedForwardKernel& kernel, const Problem& p,
                                             const DeviceInfo& device) {
  const FusedKernelLimits& limits = kernel.limits;
  const FusedLimit broken = broken_limit(limits, attention_shape(p));
  // A head dim that is not built has no shared-memory size to check against the device.
  if (broken == FusedLimit::head_dim) return shape_reason(broken, limits, p.head_dim);
  if (limits.exact_arch && device.arch() != limits.min_arch)
    return fmt::format(
        "needs sm_{0} exactly, the device is sm_{1} ({2}, code that runs on "
        "sm_{0} alone)",
        limits.min_arch, device.arch(), limits.arch_needs);
  if (device.arch() < limits.min_arch)
    return fmt::format("needs sm_{} or newer ({})", limits.min_arch, limits.arch_needs);
  const int smem = limits.find(p.head_dim)->smem_bytes;
  if (device.shared_per_block_optin < static_cast<std::size_t>(smem))
    return fmt::format("needs {} KB of shared memory per block, the device has {}", smem / 1024,
                       device.shared_per_block_optin / 1024);
  if (p.has_backward() && kernel.backward_smem_bytes != nullptr) {
    const int backward_smem = kernel.backward_smem_bytes(p.head_dim);
    if (device.shared_per_block_optin < static_cast<std::size_t>(backward_smem))
      return fmt::format(
          "{}: the backward needs {} KB of shared memory per block, the device has {}",
          pass_name(p.pass), backward_smem / 1024, device.shared_per_block_optin / 1024);
  }
  if (broken != FusedLimit::none) return shape_reason(broken, limits, p.head_dim);
  return p.paged() ? paged_reason(limits, p) : std::nullopt;
}

FusedListing fused_listing(const FusedKernelLimits& limits) {
  return {join_head_dims(limits, ", ", ", "), limits.exact_arch
                                                  ? fmt::format("sm_{}a", limits.min_arch)
                                                  : fmt::format("sm_{}+", limits.min_arch)};
}

}  // namespace sdpa
