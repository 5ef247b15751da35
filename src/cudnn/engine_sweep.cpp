// Every engine config cuDNN's heuristics (mode A, then fallback) propose for one attention
// problem that finalizes into a plan, each verified against the reference and timed: answers
// "which knob is fastest, and is heuristics' first pick it?" with data.
#include "cudnn/engine_sweep.h"

#include <algorithm>
#include <ostream>
#include <string>

#include <fmt/format.h>

#include "check.h"
#include "cudnn/cudnn_library.h"
#include "cudnn/sdpa_graph.h"
#include "device_buffer.h"
#include "device_info.h"
#include "random_fill.h"
#include "reference.h"
#include "runner.h"
#include "sweep.h"
#include "verify.h"

namespace sdpa {
namespace {

std::size_t bytes(int64_t elements, std::size_t element_bytes) {
  return static_cast<std::size_t>(elements) * element_bytes;
}

}  // namespace

int time_every_cudnn_engine(const Problem& p, uint64_t seed, const TimingOptions& timing_options,
                            std::ostream& out) {
  DeviceInfo device;
  std::string error;
  if (!query_device(0, device, error)) throw InputError(error);
  const CudnnApi* api = load_cudnn(error);
  if (api == nullptr) throw InputError(fmt::format("--cudnn-engines: {}", error));
  CudaStream stream;
  const std::size_t elem = dtype_bytes(p.dtype);
  DeviceBuffer q(bytes(p.q_elements(), elem)), k(bytes(p.kv_elements(), elem)),
      v(bytes(p.kv_elements(), elem));
  DeviceBuffer o(bytes(p.q_elements(), elem)), ref(bytes(p.q_elements(), sizeof(float)));
  const int64_t scratch_floats = reference_scratch_floats(p);
  DeviceBuffer scratch(bytes(scratch_floats, sizeof(float))), sums(sizeof(ErrorSums));
  DeviceBuffer stats(bytes(p.batch * p.heads * p.seq_q, sizeof(float)));
  SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, q.get(), p.q_elements(), seed, 0, stream.get()));
  SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, k.get(), p.kv_elements(), seed, 1, stream.get()));
  SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, v.get(), p.kv_elements(), seed, 2, stream.get()));
  SDPA_CHECK_CUDA(launch_reference_attention(p.dtype, attention_shape(p), q.get(), k.get(), v.get(),
                                             ref.as<float>(), scratch.as<float>(), scratch_floats,
                                             stream.get()));

  cudnn_graph::Handle handle;
  SDPA_CHECK_CUDNN(api->cudnnSetStream(handle.get(), stream.get()));
  const auto plans = every_sdpa_plan(p, handle.get());
  out << fmt::format("{} {} {} causal={}, cuDNN {} ({}), {}: {} engine configs finalize\n", device.name,
             p.shape_label(), dtype_name(p.dtype), p.causal ? "yes" : "no", api->version, api->path,
             plans.empty() ? "none"
                           : fmt::format("graph {:.2f} ms, heuristics {:.2f} ms",
                                         plans[0]->graph_ms, plans[0]->heuristics_ms),
             plans.size());
  out << fmt::format("{:<40} {:<62} {:>9} {:>8} {:>10} {:>8} {:>9}\n", "proposed by", "engine config",
             "workspace", "plan ms", "median ms", "TFLOP/s", "rel L2");
  const SdpaScalars scalars{static_cast<float>(p.softmax_scale()),
                            masked_score_value(api->version)};
  const AttentionTensors tensors{q.get(), k.get(), v.get(), o.get()};
  int failed = 0;
  for (const auto& plan : plans) {
    DeviceBuffer workspace(static_cast<std::size_t>(plan->workspace_bytes));
    const cudnn_graph::Descriptor pack =
        sdpa_variant_pack(tensors, p.causal, stats.get(), scalars, workspace.get());
    const auto forward = [&](cudaStream_t) {
      SDPA_CHECK_CUDNN(api->cudnnBackendExecute(handle.get(), plan->plan.get(), pack.get()));
    };
    SDPA_CHECK_CUDA(launch_poison(p.dtype, o.get(), p.q_elements(), stream.get()));
    forward(stream.get());
    const Verification check = verify_output(p.dtype, o.get(), ref.as<float>(), p.q_elements(),
                                             sums.as<ErrorSums>(), stream.get());
    std::string timing = "not timed";
    if (check.passed) {
      const TimingStats t = time_forward(forward, stream.get(), timing_options, device);
      timing =
          fmt::format("{:>10.3f} {:>8.0f}", t.median_ms, p.flops() / (t.median_ms * 1e-3) / 1e12);
    } else {
      ++failed;
    }
    out << fmt::format("{:<40} {:<62} {:>9} {:>8.1f} {:>19} {:>9.2e}{}\n", plan->chosen_by,
               plan->engine.text(), plan->workspace_bytes, plan->plan_ms, timing,
               check.rel_l2_error, check.passed ? "" : "  FAILED verification");
  }
  return failed == 0 && !plans.empty() ? 0 : 1;
}

}  // namespace sdpa
