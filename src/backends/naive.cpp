#include "backends/naive.h"

#include <cmath>

#include "gpu/check.h"
#include "gpu/cublas_handle.h"
#include "gpu/device_buffer.h"
#include "elementwise.h"
#include "softmax.h"
#include "softmax_backward.h"
#include "backends/unfused.h"

namespace sdpa {
namespace {

enum class MaskedFill { out_of_place, in_place };

// Q K^T -> * scale -> masked_fill(-inf) -> softmax -> P V, as
// `softmax((q @ k.transpose(-2, -1) * scale).masked_fill(mask, -inf)) @ v` runs in PyTorch.
class NaiveBackend final : public Backend {
 public:
  explicit NaiveBackend(MaskedFill fill) : fill_(fill) {}

  void prepare(const Problem& problem, cudaStream_t stream) override {
    p_ = problem;
    const std::size_t score_bytes = static_cast<std::size_t>(p_.score_elements()) * dtype_bytes(p_.dtype);
    scores_ = DeviceBuffer(score_bytes);
    scaled_ = DeviceBuffer(score_bytes);
    if (p_.causal) {
      // The mask is an input the caller built once, as a model would: not part of the forward.
      mask_ = DeviceBuffer(static_cast<std::size_t>(p_.seq_q * p_.seq_kv));
      SDPA_CHECK_CUDA(launch_causal_mask(mask_.as<bool>(), p_.seq_q, p_.seq_kv, stream));
      // The backward's masked fill is out of place whichever fill the forward ran.
      if (p_.has_backward()) masked_grads_ = DeviceBuffer(score_bytes);
    }
    if (p_.has_backward()) dk_t_ = DeviceBuffer(static_cast<std::size_t>(p_.kv_elements()) * dtype_bytes(p_.dtype));
  }

  void run(const AttentionTensors& t, cudaStream_t stream) override {
    const int64_t n = p_.score_elements();
    gemm_scores(cublas_.get(), GemmPrecision::tensor_core_16bit, p_, t.q, t.k, scores_.get(), stream);
    SDPA_CHECK_CUDA(launch_scale(p_.dtype, scores_.get(), scaled_.get(), n,
                                 static_cast<float>(p_.softmax_scale()), stream));
    void* probs_in = scaled_.get();
    if (p_.causal) {
      if (fill_ == MaskedFill::out_of_place) {
        // Tensor.masked_fill (no underscore) clones its input before filling the clone.
        SDPA_CHECK_CUDA(cudaMemcpyAsync(scores_.get(), scaled_.get(), scaled_.bytes(),
                                        cudaMemcpyDeviceToDevice, stream));
        probs_in = scores_.get();
      }
      SDPA_CHECK_CUDA(launch_masked_fill(p_.dtype, probs_in, mask_.as<bool>(), n,
                                         p_.seq_q * p_.seq_kv, -INFINITY, stream));
    }
    void* probs = probs_in == scores_.get() ? scaled_.get() : scores_.get();
    SDPA_CHECK_CUDA(launch_softmax_rows(p_.dtype, probs_in, probs, p_.batch * p_.heads * p_.seq_q,
                                        p_.seq_kv, stream));
    gemm_values(cublas_.get(), GemmPrecision::tensor_core_16bit, p_, probs, t.v, t.o, stream);
    probs_ = probs;
    free_scores_ = probs_in;  // the softmax's input: the backward does not need it
  }

  // As autograd runs the forward's graph backwards: P V's matmul (dP = dO V^T, dV = P^T dO),
  // the softmax, the masked fill (grad.masked_fill(mask, 0), out of place for either forward
  // fill: a copy, then the fill), the scale, then Q K^T's matmul (dQ = dS K, dK = dS^T Q).
  void backward(const AttentionTensors& t, const GradientTensors& g, cudaStream_t stream) override {
    const int64_t n = p_.score_elements();
    constexpr GemmPrecision kPrecision = GemmPrecision::tensor_core_16bit;
    void* d_probs = free_scores_;
    gemm_scores(cublas_.get(), kPrecision, p_, g.d_out, t.v, d_probs, stream);
    gemm_key_grads(cublas_.get(), kPrecision, p_, probs_, g.d_out, g.dv, stream);
    // _softmax_backward_data as PyTorch's CUDA code runs it: the product dP * P first, in a kernel of its own.
    SDPA_CHECK_CUDA(launch_mul(p_.dtype, d_probs, probs_, d_probs, n, stream));
    SDPA_CHECK_CUDA(launch_softmax_backward_from_product_rows(p_.dtype, probs_, d_probs, d_probs,
                                                              p_.batch * p_.heads * p_.seq_q, p_.seq_kv, stream));
    void* d_scores = d_probs;
    if (p_.causal) {
      SDPA_CHECK_CUDA(cudaMemcpyAsync(masked_grads_.get(), d_probs, masked_grads_.bytes(),
                                      cudaMemcpyDeviceToDevice, stream));
      SDPA_CHECK_CUDA(launch_masked_fill(p_.dtype, masked_grads_.get(), mask_.as<bool>(), n,
                                         p_.seq_q * p_.seq_kv, 0.f, stream));
      d_scores = masked_grads_.get();
    }
    SDPA_CHECK_CUDA(launch_scale(p_.dtype, d_scores, d_scores, n, static_cast<float>(p_.softmax_scale()), stream));
    gemm_values(cublas_.get(), kPrecision, p_, d_scores, t.k, g.dq, stream);
    // k entered the forward as k.transpose(-2, -1): its gradient comes out as [D, Skv], and
    // AccumulateGrad copies it into k's layout.
    gemm_key_grads_transposed(cublas_.get(), kPrecision, p_, d_scores, t.q, dk_t_.get(), stream);
    SDPA_CHECK_CUDA(launch_transpose_matrices(p_.dtype, dk_t_.get(), g.dk, p_.batch * p_.kv_heads, p_.head_dim,
                                              p_.seq_kv, stream));
  }

 private:
  MaskedFill fill_;
  Problem p_;
  CublasHandle cublas_;
  DeviceBuffer scores_;
  DeviceBuffer scaled_;
  DeviceBuffer mask_;
  DeviceBuffer masked_grads_;
  DeviceBuffer dk_t_;  // the backward's dK transposed ([D, Skv]), before AccumulateGrad's copy
  void* probs_ = nullptr;        // P, kept by the last forward for the backward
  void* free_scores_ = nullptr;  // the other score buffer, free after the forward
};

std::size_t naive_workspace(const Problem& p) {
  const std::size_t mask = p.causal ? static_cast<std::size_t>(p.seq_q * p.seq_kv) : 0;
  // The backward reuses the forward's two score buffers (P and dP), plus one for the masked fill's copy.
  const int score_buffers = 2 + (p.causal && p.has_backward() ? 1 : 0);
  const std::size_t dk_t = p.has_backward() ? static_cast<std::size_t>(p.kv_elements()) * dtype_bytes(p.dtype) : 0;
  return score_buffers * static_cast<std::size_t>(p.score_elements()) * dtype_bytes(p.dtype) + mask + dk_t;
}

// The scores' trips through DRAM per forward, kernel by kernel: Q K^T writes them (1), scale
// reads and writes (2), the masked fill reads and writes in place (2, causal only), softmax reads
// and writes (2), P V reads them (1). The out-of-place fill's copy is a memcpy, not a kernel.
double naive_score_passes(const Problem& p) { return p.causal ? 8 : 6; }

// What those passes move, with Q, K, V read and O written once and the mask (small enough to
// stay in L2 across the slices) read once.
double naive_kernel_dram_bytes(const Problem& p) {
  const double score_bytes = static_cast<double>(p.score_elements()) * dtype_bytes(p.dtype);
  const double mask_bytes = p.causal ? static_cast<double>(p.seq_q * p.seq_kv) : 0;
  return naive_score_passes(p) * score_bytes + p.min_bytes() + mask_bytes;
}

BackendEntry naive_entry(std::string_view name, std::string_view summary, MaskedFill fill) {
  BackendEntry entry = unfused_backend_entry(name, summary, naive_workspace, nullptr);
  entry.create = fill == MaskedFill::out_of_place
                     ? [](const std::string&) -> std::unique_ptr<Backend> {
                         return std::make_unique<NaiveBackend>(MaskedFill::out_of_place);
                       }
                     : [](const std::string&) -> std::unique_ptr<Backend> {
                         return std::make_unique<NaiveBackend>(MaskedFill::in_place);
                       };
  entry.kernel_dram_bytes = naive_kernel_dram_bytes;
  entry.no_backward_reason = "";
  return entry;
}

}  // namespace

const BackendEntry& naive_backend_entry() {
  static const BackendEntry entry = naive_entry(
      "naive",
      "unfused: 16-bit GEMMs on tensor cores, scale, out-of-place masked fill (copy + fill), "
      "softmax",
      MaskedFill::out_of_place);
  return entry;
}

const BackendEntry& naive_inplace_backend_entry() {
  static const BackendEntry entry = naive_entry(
      "naive-inplace", "as naive, with an in-place masked fill (no copy of the scores)",
      MaskedFill::in_place);
  return entry;
}

}  // namespace sdpa
