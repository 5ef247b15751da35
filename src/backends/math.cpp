#include "backends/math.h"

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

std::size_t floats(int64_t n) { return static_cast<std::size_t>(n) * sizeof(float); }

// The structure of at::_scaled_dot_product_attention_math with 16-bit inputs (PyTorch 2.11, as
// its kernels and ops were traced on an H100): upcast to fp32, scale q and k by sqrt(scale) each,
// rebuild the causal mask on every call (ones, tril, where(mask, 0, -inf) into an additive float
// mask), fp32 GEMMs with TF32 off, _safe_softmax (softmax, isneginf, all, where), then the two
// downcasts of what it returns: the attention weights (which sdpa then drops) and the output.
// One-element "scalar tensors" are filled on the device as PyTorch's at::scalar_tensor does.
class MathBackend final : public Backend {
 public:
  void prepare(const Problem& problem, cudaStream_t) override {
    p_ = problem;
    q32_ = DeviceBuffer(floats(p_.q_elements()));
    k32_ = DeviceBuffer(floats(p_.kv_elements()));
    v32_ = DeviceBuffer(floats(p_.kv_elements()));
    out32_ = DeviceBuffer(floats(p_.q_elements()));
    scores_ = DeviceBuffer(floats(p_.score_elements()));
    probs_ = DeviceBuffer(floats(p_.score_elements()));
    is_neg_inf_ = DeviceBuffer(static_cast<std::size_t>(p_.score_elements()));
    weights_ = DeviceBuffer(static_cast<std::size_t>(p_.score_elements()) * dtype_bytes(p_.dtype));
    row_all_masked_ = DeviceBuffer(static_cast<std::size_t>(p_.batch * p_.heads * p_.seq_q));
    scalars_ = DeviceBuffer(floats(3));
    if (p_.causal) {
      const auto mask_elems = static_cast<std::size_t>(p_.seq_q * p_.seq_kv);
      ones_ = DeviceBuffer(mask_elems);
      keep_ = DeviceBuffer(mask_elems);
      additive_mask_ = DeviceBuffer(floats(p_.seq_q * p_.seq_kv));
    }
    if (p_.has_backward()) {
      d_out32_ = DeviceBuffer(floats(p_.q_elements()));
      dk32_ = DeviceBuffer(floats(p_.kv_elements()));
      dv32_ = DeviceBuffer(floats(p_.kv_elements()));
      dk_t_ = DeviceBuffer(static_cast<std::size_t>(p_.kv_elements()) * dtype_bytes(p_.dtype));
    }
  }

  void run(const AttentionTensors& t, cudaStream_t s) override {
    const int64_t nq = p_.q_elements();
    const int64_t nkv = p_.kv_elements();
    const int64_t n = p_.score_elements();
    const int64_t rows = p_.batch * p_.heads * p_.seq_q;
    const float sqrt_scale = static_cast<float>(std::sqrt(p_.softmax_scale()));
    float* zero = scalars_.as<float>();

    SDPA_CHECK_CUDA(launch_cast_to_float(p_.dtype, t.q, q32_.as<float>(), nq, s));
    SDPA_CHECK_CUDA(launch_cast_to_float(p_.dtype, t.k, k32_.as<float>(), nkv, s));
    SDPA_CHECK_CUDA(launch_cast_to_float(p_.dtype, t.v, v32_.as<float>(), nkv, s));
    SDPA_CHECK_CUDA(launch_scale_float(q32_.as<float>(), q32_.as<float>(), nq, sqrt_scale, s));
    SDPA_CHECK_CUDA(launch_scale_float(k32_.as<float>(), k32_.as<float>(), nkv, sqrt_scale, s));
    if (p_.causal) build_additive_mask(zero + 1, s);

    gemm_scores(cublas_.get(), GemmPrecision::fp32_simt, p_, q32_.get(), k32_.get(), scores_.get(), s);
    if (p_.causal)
      SDPA_CHECK_CUDA(launch_add_mask_float(scores_.as<float>(), additive_mask_.as<float>(), n,
                                            p_.seq_q * p_.seq_kv, s));

    // _safe_softmax: rows that are entirely -inf give zeros instead of NaN.
    SDPA_CHECK_CUDA(launch_softmax_rows_float(scores_.as<float>(), probs_.as<float>(), rows, p_.seq_kv, s));
    SDPA_CHECK_CUDA(launch_isneginf_float(scores_.as<float>(), is_neg_inf_.as<bool>(), n, s));
    SDPA_CHECK_CUDA(launch_all_rows(is_neg_inf_.as<bool>(), row_all_masked_.as<bool>(), rows, p_.seq_kv, s));
    SDPA_CHECK_CUDA(launch_fill_float(zero, 1, 0.f, s));
    SDPA_CHECK_CUDA(launch_where_rows_float(row_all_masked_.as<bool>(), zero, probs_.as<float>(),
                                            scores_.as<float>(), rows, p_.seq_kv, s));
    SDPA_CHECK_CUDA(launch_cast_from_float(p_.dtype, scores_.as<float>(), weights_.get(), n, s));

    gemm_values(cublas_.get(), GemmPrecision::fp32_simt, p_, scores_.get(), v32_.get(), out32_.get(), s);
    SDPA_CHECK_CUDA(launch_cast_from_float(p_.dtype, out32_.as<float>(), t.o, nq, s));
  }

  // Autograd through that graph, last op first: the downcast's backward (an upcast of dO), P V's
  // matmul (dP = dO V^T, dV = P^T dO), _safe_softmax's (_softmax_backward_data, which on CUDA
  // multiplies dP by P in a kernel of its own first; the mask's add passes the gradient through),
  // the scaled Q K^T's matmul (d(q s) = dS (k s), and k's side as the gradient of (k s)^T =
  // (q s)^T dS: [D, Skv]), the two sqrt(scale) multiplies, the upcasts' backward (downcasts), and
  // AccumulateGrad's copy of k's gradient, which arrives transposed, into k's layout. The saved
  // P (scores_), scaled q and k, and v are the forward's own buffers; probs_ and out32_ are free.
  void backward(const AttentionTensors&, const GradientTensors& g, cudaStream_t s) override {
    const int64_t nq = p_.q_elements();
    const int64_t nkv = p_.kv_elements();
    const float sqrt_scale = static_cast<float>(std::sqrt(p_.softmax_scale()));
    constexpr GemmPrecision kPrecision = GemmPrecision::fp32_simt;
    float* d_scores = probs_.as<float>();
    float* dq32 = out32_.as<float>();
    SDPA_CHECK_CUDA(launch_cast_to_float(p_.dtype, g.d_out, d_out32_.as<float>(), nq, s));
    gemm_scores(cublas_.get(), kPrecision, p_, d_out32_.get(), v32_.get(), d_scores, s);
    gemm_key_grads(cublas_.get(), kPrecision, p_, scores_.get(), d_out32_.get(), dv32_.get(), s);
    SDPA_CHECK_CUDA(launch_mul_float(d_scores, scores_.as<float>(), d_scores, p_.score_elements(), s));
    SDPA_CHECK_CUDA(launch_softmax_backward_from_product_rows_float(
        scores_.as<float>(), d_scores, d_scores, p_.batch * p_.heads * p_.seq_q, p_.seq_kv, s));
    gemm_values(cublas_.get(), kPrecision, p_, d_scores, k32_.get(), dq32, s);
    gemm_key_grads_transposed(cublas_.get(), kPrecision, p_, d_scores, q32_.get(), dk32_.get(), s);
    SDPA_CHECK_CUDA(launch_scale_float(dq32, dq32, nq, sqrt_scale, s));
    SDPA_CHECK_CUDA(launch_scale_float(dk32_.as<float>(), dk32_.as<float>(), nkv, sqrt_scale, s));
    SDPA_CHECK_CUDA(launch_cast_from_float(p_.dtype, dq32, g.dq, nq, s));
    SDPA_CHECK_CUDA(launch_cast_from_float(p_.dtype, dk32_.as<float>(), dk_t_.get(), nkv, s));
    SDPA_CHECK_CUDA(launch_cast_from_float(p_.dtype, dv32_.as<float>(), g.dv, nkv, s));
    SDPA_CHECK_CUDA(launch_transpose_matrices(p_.dtype, dk_t_.get(), g.dk, p_.batch * p_.kv_heads,
                                              p_.head_dim, p_.seq_kv, s));
  }

 private:
  // attn_mask = ones(L, S, bool).tril(); where(attn_mask, scalar_tensor(0), -inf). Older
  // PyTorch took attn_mask.logical_not() first; 2.11 launches no such kernel.
  // The two scalars of the where are filled one-element tensors: `scalars` holds two floats.
  void build_additive_mask(float* scalars, cudaStream_t s) {
    const int64_t m = p_.seq_q * p_.seq_kv;
    SDPA_CHECK_CUDA(launch_fill_bool(ones_.as<bool>(), m, true, s));
    SDPA_CHECK_CUDA(launch_tril_bool(ones_.as<bool>(), keep_.as<bool>(), p_.seq_q, p_.seq_kv, s));
    SDPA_CHECK_CUDA(launch_fill_float(scalars, 1, 0.f, s));
    SDPA_CHECK_CUDA(launch_fill_float(scalars + 1, 1, -INFINITY, s));
    SDPA_CHECK_CUDA(launch_where_scalar_float(keep_.as<bool>(), additive_mask_.as<float>(), m,
                                              scalars, scalars + 1, s));
  }

  Problem p_;
  CublasHandle cublas_;
  DeviceBuffer q32_, k32_, v32_, out32_;
  DeviceBuffer scores_, probs_, is_neg_inf_, row_all_masked_, scalars_;
  DeviceBuffer weights_;  // the attention weights in the input dtype, as the math path returns them
  DeviceBuffer ones_, keep_, additive_mask_;
  DeviceBuffer d_out32_, dk32_, dv32_;  // the backward's own
  DeviceBuffer dk_t_;                   // k's gradient in the dtype, transposed ([D, Skv]), before its copy
};

std::size_t math_workspace(const Problem& p) {
  const auto n = static_cast<std::size_t>(p.score_elements());
  const auto mask = static_cast<std::size_t>(p.seq_q * p.seq_kv);
  return floats(2 * p.q_elements() + 2 * p.kv_elements()) +
         n * (2 * sizeof(float) + 1 + dtype_bytes(p.dtype)) +
         static_cast<std::size_t>(p.batch * p.heads * p.seq_q) + floats(3) +
         (p.causal ? mask * (2 + sizeof(float)) : 0) +
         (p.has_backward() ? floats(p.q_elements() + 2 * p.kv_elements()) +
                                 static_cast<std::size_t>(p.kv_elements()) * dtype_bytes(p.dtype)
                           : 0);
}

}  // namespace

const BackendEntry& math_backend_entry() {
  static const BackendEntry entry = [] {
    BackendEntry e = unfused_backend_entry(
        "math",
        "PyTorch's math path: fp32 upcast, mask rebuilt per call, fp32 SIMT GEMMs, safe softmax",
        math_workspace, [](const std::string&) -> std::unique_ptr<Backend> {
          return std::make_unique<MathBackend>();
        });
    e.no_backward_reason = "";
    return e;
  }();
  return entry;
}

}  // namespace sdpa
