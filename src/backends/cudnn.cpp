#include "backends/cudnn.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "check.h"
#include "cudnn/cudnn_library.h"
#include "cudnn/sdpa_graph.h"
#include "device_buffer.h"

namespace sdpa {
namespace {

namespace cg = cudnn_graph;

// A plan is built once per problem shape; the scale is passed by value, so it is not in the key.
using PlanKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, DType, bool>;

PlanKey plan_key(const Problem& p) {
  return {p.batch, p.heads, p.kv_heads, p.seq_q, p.seq_kv, p.head_dim, p.dtype, p.causal};
}

// The process's cuDNN handle and its plan cache.
class CudnnSession {
 public:
  // Never destroyed: at exit, cuDNN and the CUDA runtime tear down in an order we do not control.
  static CudnnSession& get() {
    static CudnnSession* session = new CudnnSession();
    return *session;
  }

  cudnnHandle_t handle() const { return handle_->get(); }

  void bind(cudaStream_t stream) {
    if (stream_bound_ && stream == stream_) return;
    SDPA_CHECK_CUDNN(cudnn().cudnnSetStream(handle(), stream));
    stream_ = stream;
    stream_bound_ = true;
  }

  // The cached plan for `p`, built on a miss; `built` says which.
  std::shared_ptr<const SdpaPlan> plan(const Problem& p, bool& built) {
    const PlanKey key = plan_key(p);
    if (const auto it = plans_.find(key); it != plans_.end()) {
      built = false;
      return it->second;
    }
    std::shared_ptr<const SdpaPlan> plan = first_sdpa_plan(p, handle());
    plans_.emplace(key, plan);
    built = true;
    return plan;
  }

  // How long creating the handle took, reported once: by the first case that pays for it.
  std::optional<double> take_handle_ms() { return std::exchange(handle_ms_, std::nullopt); }

 private:
  CudnnSession() {
    const auto start = std::chrono::steady_clock::now();
    handle_ = std::make_unique<cg::Handle>();
    handle_ms_ =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  std::unique_ptr<cg::Handle> handle_;
  std::optional<double> handle_ms_;
  cudaStream_t stream_ = nullptr;
  bool stream_bound_ = false;
  std::map<PlanKey, std::shared_ptr<const SdpaPlan>> plans_;
};

class CudnnBackend final : public Backend {
 public:
  void prepare(const Problem& problem, cudaStream_t) override {
    CudnnSession& session = CudnnSession::get();
    const std::optional<double> handle_ms = session.take_handle_ms();
    bool built = false;
    plan_ = session.plan(problem, built);
    causal_ = problem.causal;
    bound_ = {};
    scalars_ = SdpaScalars{static_cast<float>(problem.softmax_scale()),
                           masked_score_value(cudnn().version)};
    stats_ = DeviceBuffer(static_cast<std::size_t>(problem.batch * problem.heads * problem.seq_q) *
                          sizeof(float));
    workspace_ = DeviceBuffer(static_cast<std::size_t>(plan_->workspace_bytes));
    if (built)
      fmt::print(stderr,
                 "cudnn {} {}{}: {} ({}); workspace {} B; setup {}graph {:.2f} ms, "
                 "heuristics {:.2f} ms, plan {:.1f} ms ({} config{} tried)\n",
                 problem.shape_label(), dtype_name(problem.dtype), problem.causal ? " causal" : "",
                 plan_->engine.text(), plan_->chosen_by, plan_->workspace_bytes,
                 handle_ms ? fmt::format("handle {:.1f} ms, ", *handle_ms) : "", plan_->graph_ms,
                 plan_->heuristics_ms, plan_->plan_ms, plan_->configs_tried,
                 plan_->configs_tried == 1 ? "" : "s");
  }

  std::string chosen_config() const override {
    return fmt::format("{} ({}), cuDNN {}", plan_->engine.text(), plan_->chosen_by, cudnn().version);
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

  std::shared_ptr<const SdpaPlan> plan_;
  bool causal_ = false;
  SdpaScalars scalars_;
  DeviceBuffer stats_;
  DeviceBuffer workspace_;
  cg::Descriptor pack_;
  AttentionTensors bound_{};
};

std::optional<std::string> cudnn_unsupported(const Problem& p, const DeviceInfo& device) {
  std::string why;
  if (load_cudnn(why) == nullptr) return why;
  if (device.arch() < 80) return "cuDNN's fused attention needs sm_80 or newer";
  const int64_t max_head_dim = device.arch() == 90 ? 256 : 128;
  if (p.head_dim % 8 != 0 || p.head_dim > max_head_dim)
    return fmt::format(
        "head dim {}: cuDNN's fused attention takes multiples of 8 up to {} on sm_{}", p.head_dim,
        max_head_dim, device.arch());
  return std::nullopt;
}

std::size_t cudnn_workspace(const Problem& p) {
  // The softmax statistics; the plan's own workspace is known only once it is built (0 seen so
  // far).
  return static_cast<std::size_t>(p.batch * p.heads * p.seq_q) * sizeof(float);
}

}  // namespace

const BackendEntry& cudnn_backend_entry() {
  static const BackendEntry entry{
      .name = "cudnn",
      .summary =
          "cuDNN's fused attention through the backend graph API, plan built once and cached",
      .dtypes = "bf16, fp16",
      .head_dims = "x8 to 256",
      .archs = "sm_80+",
      .not_built_reason = "",
      .unsupported = cudnn_unsupported,
      .workspace_bytes = cudnn_workspace,
      .create = [] { return std::unique_ptr<Backend>(new CudnnBackend()); },
  };
  return entry;
}

}  // namespace sdpa
