#include "backends/cudnn/cudnn_backend.h"

#include <chrono>
#include <memory>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "backends/cudnn/cudnn_check.h"
#include "backends/cudnn/cudnn_library.h"
#include "backends/cudnn/sdpa_graph.h"
#include "gpu/device_buffer.h"
#include "model/case_key.h"
#include "model/errors.h"

namespace sdpa {
namespace {

namespace cg = cudnn_graph;

std::string variant_case_name(const std::string& variant) {
  return variant.empty() ? "cudnn" : "cudnn[" + variant + "]";
}

// The process's cuDNN handle and its plans, keyed by case: heuristics' first choice under
// "cudnn", every engine config under "cudnn[VARIANT]".
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
    for (std::unique_ptr<SdpaPlan>& plan : sdpa_plans(p, handle(), PlanChoice::every)) {
      names.push_back(variant_name(plan->engine));
      plans_.insert_or_assign(case_key(variant_case_name(names.back()), p), std::move(plan));
    }
    return names;
  }

  // The plan of `variant` for `p`; heuristics' first choice is built on a miss.
  std::shared_ptr<const SdpaPlan> plan(const Problem& p, const std::string& variant) {
    const CaseKey key = case_key(variant_case_name(variant), p);
    if (const auto it = plans_.find(key); it != plans_.end()) return it->second;
    if (!variant.empty())
      throw InputError(fmt::format("cuDNN engine config {} was not proposed for {}", variant, p.shape_label()));
    std::shared_ptr<const SdpaPlan> first = std::move(sdpa_plans(p, handle(), PlanChoice::first).front());
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
    plan_ = session.plan(problem, variant_);
    causal_ = problem.causal;
    bound_ = {};
    scalars_ = SdpaScalars{static_cast<float>(problem.softmax_scale()), masked_score_value(cudnn().version)};
    stats_ = DeviceBuffer(static_cast<std::size_t>(problem.batch * problem.heads * problem.seq_q) * sizeof(float));
    workspace_ = DeviceBuffer(static_cast<std::size_t>(plan_->workspace_bytes));
  }

  BackendSetup setup() const override {
    BackendSetup s;
    s.config = fmt::format("{} ({}; {} config{} tried), workspace {} B, cuDNN {}", plan_->engine.text(),
                           plan_->chosen_by, plan_->configs_tried, plan_->configs_tried == 1 ? "" : "s",
                           plan_->workspace_bytes, cudnn().version);
    s.times_ms = {{"handle", CudnnSession::get().handle_ms()},
                  {"graph", plan_->graph_ms},
                  {"heuristics", plan_->heuristics_ms},
                  {"plan", plan_->plan_ms}};
    return s;
  }

  void run(const AttentionTensors& t, cudaStream_t stream) override {
    CudnnSession& session = CudnnSession::get();
    session.bind(stream);
    if (t.q != bound_.q || t.k != bound_.k || t.v != bound_.v || t.o != bound_.o) bind(t);
    SDPA_CHECK_CUDNN(cudnn().cudnnBackendExecute(session.handle(), plan_->plan.get(), pack_.get()));
  }

 private:
  // The variant pack names the buffers the plan runs on; rebuilt only when they change.
  void bind(const AttentionTensors& t) {
    pack_ = sdpa_variant_pack(t, causal_, stats_.get(), scalars_, workspace_.get());
    bound_ = t;
  }

  std::string variant_;
  std::shared_ptr<const SdpaPlan> plan_;
  bool causal_ = false;
  SdpaScalars scalars_;
  DeviceBuffer stats_;
  DeviceBuffer workspace_;
  cg::Descriptor pack_;
  AttentionTensors bound_{};
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
  return std::nullopt;
}

std::size_t cudnn_workspace_bytes(const Problem& p) {
  // The softmax statistics; the plan's own workspace is known only once it is built (0 seen so far).
  return static_cast<std::size_t>(p.batch * p.heads * p.seq_q) * sizeof(float);
}

std::unique_ptr<Backend> create_cudnn_backend(const std::string& variant) {
  return std::make_unique<CudnnBackend>(variant);
}

std::vector<std::string> cudnn_engine_variants(const Problem& p) { return CudnnSession::get().every_variant(p); }

}  // namespace sdpa
