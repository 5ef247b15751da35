#include "backends/cudnn/cudnn_backend.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "backends/cudnn/cudnn_check.h"
#include "backends/cudnn/cudnn_library.h"
#include "backends/cudnn/paged_kv_graph.h"
#include "backends/cudnn/sdpa_backward_graph.h"
#include "backends/cudnn/sdpa_graph.h"
#include "gpu/check.h"
#include "gpu/device_buffer.h"
#include "model/case_key.h"
#include "model/errors.h"

namespace sdpa {
namespace {

namespace cg = cudnn_graph;

std::string variant_case_name(const std::string& variant) {
  return variant.empty() ? "cudnn" : "cudnn[" + variant + "]";
}

// `p` as one pass: the forward's plan and the backward's are shared by every pass that runs them.
Problem as_pass(Problem p, AttentionPass pass) {
  p.pass = pass;
  return p;
}

std::size_t row_count(const Problem& p) { return static_cast<std::size_t>(p.batch * p.heads * p.seq_q); }

// "engine 2, knobs {kernel_cfg=32} (heuristics mode A, config 1 of 3; 1 config tried), workspace 256 B"
std::string plan_text(const SdpaPlan& plan) {
  return fmt::format("{} ({}; {} config{} tried), workspace {} B", plan.engine.text(), plan.chosen_by,
                     plan.configs_tried, plan.configs_tried == 1 ? "" : "s", plan.workspace_bytes);
}

// A paged graph's per-sequence lengths on the device: every sequence holds Sq queries, Skv keys.
class DeviceSequenceLengths {
 public:
  DeviceSequenceLengths() = default;
  explicit DeviceSequenceLengths(const Problem& p)
      : q_(static_cast<std::size_t>(p.batch) * sizeof(int32_t)), kv_(q_.bytes()) {
    const auto upload = [&](DeviceBuffer& to, int64_t length) {
      const std::vector<int32_t> lengths(static_cast<std::size_t>(p.batch),
                                         static_cast<int32_t>(length));
      SDPA_CHECK_CUDA(cudaMemcpy(to.get(), lengths.data(), to.bytes(), cudaMemcpyHostToDevice));
    };
    upload(q_, p.seq_q);
    upload(kv_, p.seq_kv);
  }
  SequenceLengths view() const { return {q_.as<int32_t>(), kv_.as<int32_t>()}; }

 private:
  DeviceBuffer q_, kv_;
};

// A graph cuDNN could not be asked about without a GPU: no plan for it declines the case (skipped
// with cuDNN's reason), where a contiguous graph's would be a failure.
template <typename Build>
auto declined_without_plan(const Problem& p, Build build) {
  try {
    return build();
  } catch (const ApiError& e) {
    throw CaseDeclined(fmt::format("cuDNN {} has no plan for the paged K/V graph of {}: {}",
                                   cudnn_version_text(cudnn().version), p.shape_label(), e.what()));
  }
}

// The process's cuDNN handle and its plans, keyed by case: the forward's heuristics' first choice
// under "cudnn", every forward engine config under "cudnn[VARIANT]", the backward's first choice
// under "cudnn backward".
class CudnnSession {
 public:
  // Never destroyed: at exit, cuDNN and the CUDA runtime tear down in an order we do not control.
  static CudnnSession& get() {
    static CudnnSession* session = new CudnnSession();
    return *session;
  }

  cudnnHandle_t handle() const { return handle_->get(); }
  double handle_ms() const { return handle_ms_; }

  void bind(cudaStream_t stream) {
    if (stream_bound_ && stream == stream_) return;
    SDPA_CHECK_CUDNN(cudnn().cudnnSetStream(handle(), stream));
    stream_ = stream;
    stream_bound_ = true;
  }

  std::vector<std::string> every_variant(const Problem& p) {
    std::vector<std::string> names;
    const Problem forward = as_pass(p, AttentionPass::forward);
    for (std::unique_ptr<SdpaPlan>& plan : sdpa_plans(forward, handle(), PlanChoice::every)) {
      names.push_back(variant_name(plan->engine));
      plans_.insert_or_assign(case_key(variant_case_name(names.back()), forward), std::move(plan));
    }
    return names;
  }

  // The forward's plan of `variant` for `p`; heuristics' first choice is built on a miss.
  std::shared_ptr<const SdpaPlan> plan(const Problem& p, const std::string& variant) {
    const Problem forward = as_pass(p, AttentionPass::forward);
    const CaseKey key = case_key(variant_case_name(variant), forward);
    if (const auto it = plans_.find(key); it != plans_.end()) return it->second;
    if (!variant.empty())
      throw InputError(fmt::format("cuDNN engine config {} was not proposed for {}", variant, p.shape_label()));
    std::shared_ptr<const SdpaPlan> first = std::move(sdpa_plans(forward, handle(), PlanChoice::first).front());
    plans_.emplace(key, first);
    return first;
  }

  // The backward's plan for `p`, heuristics' first choice, built on a miss.
  std::shared_ptr<const SdpaPlan> backward_plan(const Problem& p) {
    const Problem backward = as_pass(p, AttentionPass::backward);
    const CaseKey key = case_key("cudnn backward", backward);
    if (const auto it = plans_.find(key); it != plans_.end()) return it->second;
    std::shared_ptr<const SdpaPlan> first = sdpa_backward_plan(backward, handle());
    plans_.emplace(key, first);
    return first;
  }

 private:
  CudnnSession() {
    const auto start = std::chrono::steady_clock::now();
    handle_ = std::make_unique<cg::Handle>();
    handle_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  std::unique_ptr<cg::Handle> handle_;
  double handle_ms_ = 0;
  cudaStream_t stream_ = nullptr;
  bool stream_bound_ = false;
  std::unordered_map<CaseKey, std::shared_ptr<const SdpaPlan>, CaseKeyHash> plans_;
};

class CudnnBackend final : public Backend {
 public:
  explicit CudnnBackend(std::string variant) : variant_(std::move(variant)) {}

  void prepare(const Problem& problem, cudaStream_t) override {
    CudnnSession& session = CudnnSession::get();
    plan_ = problem.paged()
                ? declined_without_plan(problem, [&] { return session.plan(problem, variant_); })
                : session.plan(problem, variant_);
    causal_ = problem.causal;
    page_size_ = problem.page_size;
    lengths_ = problem.paged() ? DeviceSequenceLengths(problem) : DeviceSequenceLengths();
    bound_ = {};
    scalars_ = SdpaScalars{static_cast<float>(problem.softmax_scale()), masked_score_value(cudnn().version)};
    // Written by every forward; the backward reads the last one's.
    stats_ = DeviceBuffer(row_count(problem) * sizeof(float));
    workspace_ = DeviceBuffer(static_cast<std::size_t>(plan_->workspace_bytes));
    backward_plan_ = nullptr;
    if (problem.has_backward()) prepare_backward(session, problem);
  }

  BackendSetup setup() const override {
    BackendSetup s;
    s.config = backward_plan_ == nullptr
                   ? fmt::format("{}, cuDNN {}", plan_text(*plan_), cudnn().version)
                   : fmt::format("forward {}; backward {}; cuDNN {}", plan_text(*plan_), plan_text(*backward_plan_),
                                 cudnn().version);
    if (page_size_ > 0)
      s.config +=
          fmt::format(", paged K/V (pages of {} through cuDNN's paged cache load)", page_size_);
    s.times_ms = {{"handle", CudnnSession::get().handle_ms()},
                  {"graph", plan_->graph_ms},
                  {"heuristics", plan_->heuristics_ms},
                  {"plan", plan_->plan_ms}};
    if (backward_plan_ != nullptr) {
      s.times_ms.emplace_back("backward graph", backward_plan_->graph_ms);
      s.times_ms.emplace_back("backward heuristics", backward_plan_->heuristics_ms);
      s.times_ms.emplace_back("backward plan", backward_plan_->plan_ms);
    }
    return s;
  }

  void run(const AttentionTensors& t, cudaStream_t stream) override {
    CudnnSession& session = CudnnSession::get();
    session.bind(stream);
    if (!same(t, bound_)) bind(t);
    SDPA_CHECK_CUDNN(cudnn().cudnnBackendExecute(session.handle(), plan_->plan.get(), pack_.get()));
  }

  // From the statistics the last run() wrote into stats_.
  void backward(const AttentionTensors& t, const GradientTensors& g, cudaStream_t stream) override {
    CudnnSession& session = CudnnSession::get();
    session.bind(stream);
    if (!same(t, backward_bound_) || !same(g, grads_bound_)) bind_backward(t, g);
    if (zero_dq_accum_) SDPA_CHECK_CUDA(cudaMemsetAsync(dq_accum_.get(), 0, dq_accum_.bytes(), stream));
    SDPA_CHECK_CUDNN(
        cudnn().cudnnBackendExecute(session.handle(), backward_plan_->plan.get(), backward_pack_.get()));
  }

 private:
  static bool same(const AttentionTensors& a, const AttentionTensors& b) {
    return a.q == b.q && a.k == b.k && a.v == b.v && a.o == b.o && a.paged == b.paged;
  }
  static bool same(const GradientTensors& a, const GradientTensors& b) {
    return a.d_out == b.d_out && a.dq == b.dq && a.dk == b.dk && a.dv == b.dv;
  }

  void prepare_backward(CudnnSession& session, const Problem& problem) {
    backward_plan_ = session.backward_plan(problem);
    backward_scalars_.scale = scalars_.scale;
    row_dot_ = DeviceBuffer(row_count(problem) * sizeof(float));
    dq_accum_ = DeviceBuffer(row_count(problem) * static_cast<std::size_t>(problem.head_dim) * sizeof(float));
    backward_workspace_ = DeviceBuffer(static_cast<std::size_t>(backward_plan_->workspace_bytes));
    zero_dq_accum_ = dq_accum_needs_zeroing(cudnn().version);
    backward_bound_ = {};
    grads_bound_ = {};
  }

  // The variant packs name the buffers the plans run on; rebuilt only when they change.
  void bind(const AttentionTensors& t) {
    pack_ =
        sdpa_variant_pack(t, causal_, {stats_.get(), workspace_.get(), lengths_.view()}, scalars_);
    bound_ = t;
  }
  void bind_backward(const AttentionTensors& t, const GradientTensors& g) {
    backward_pack_ = sdpa_backward_variant_pack(
        t, g, causal_, {stats_.get(), row_dot_.get(), dq_accum_.get(), backward_workspace_.get()}, backward_scalars_);
    backward_bound_ = t;
    grads_bound_ = g;
  }

  std::string variant_;
  std::shared_ptr<const SdpaPlan> plan_;
  bool causal_ = false;
  int64_t page_size_ = 0;          // 0: contiguous K and V
  DeviceSequenceLengths lengths_;  // a paged graph's
  SdpaScalars scalars_;
  DeviceBuffer stats_;
  DeviceBuffer workspace_;
  cg::Descriptor pack_;
  AttentionTensors bound_{};

  std::shared_ptr<const SdpaPlan> backward_plan_;  // null without a backward
  SdpaBackwardScalars backward_scalars_;
  DeviceBuffer row_dot_;   // rowsum(dO ∘ O), written and read by each backward
  DeviceBuffer dq_accum_;  // dQ in fp32 across key blocks
  DeviceBuffer backward_workspace_;
  bool zero_dq_accum_ = false;
  cg::Descriptor backward_pack_;
  AttentionTensors backward_bound_{};
  GradientTensors grads_bound_{};
};

}  // namespace

std::optional<std::string> cudnn_unsupported(const Problem& p, const DeviceInfo& device) {
  std::string why;
  if (load_cudnn(why) == nullptr) return why;
  if (device.arch() < 80) return "cuDNN's fused attention needs sm_80 or newer";
  const int64_t max_head_dim = device.arch() == 90 ? 256 : 128;
  if (p.head_dim % 8 != 0 || p.head_dim > max_head_dim)
    return fmt::format("head dim {}: cuDNN's fused attention takes multiples of 8 up to {} on sm_{}", p.head_dim,
                       max_head_dim, device.arch());
  if (auto paged = paged_kv_cudnn_unsupported(p, cudnn().version)) return paged;
  if (p.has_backward()) return sdpa_backward_unsupported(p, cudnn().version);
  return std::nullopt;
}

std::size_t cudnn_workspace_bytes(const Problem& p) {
  // The softmax statistics, and with a backward its rowsum(dO ∘ O) and fp32 dQ accumulator; the
  // plans' own workspaces are known only once they are built (256 B seen for the forward).
  // A paged graph's two int32 length tensors are B each.
  return row_count(p) * sizeof(float) + (p.has_backward() ? sdpa_backward_buffer_bytes(p) : 0) +
         (p.paged() ? 2 * static_cast<std::size_t>(p.batch) * sizeof(int32_t) : 0);
}

std::unique_ptr<Backend> create_cudnn_backend(const std::string& variant) {
  return std::make_unique<CudnnBackend>(variant);
}

std::vector<std::string> cudnn_engine_variants(const Problem& p) {
  if (p.paged())
    return declined_without_plan(p, [&] { return CudnnSession::get().every_variant(p); });
  return CudnnSession::get().every_variant(p);
}

}  // namespace sdpa
