// sdpa-cudnn-engines: every engine config cuDNN's heuristics (mode A, then fallback) propose for
// one attention problem that finalizes into a plan, each verified against the reference and
// timed. Answers "which knob is fastest, and is heuristics' first pick it?" with data.
#include <algorithm>
#include <cstdio>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "check.h"
#include "cudnn/cudnn_library.h"
#include "cudnn/sdpa_graph.h"
#include "device_buffer.h"
#include "device_info.h"
#include "random_fill.h"
#include "reference.h"
#include "measure/timing.h"
#include "verify.h"

namespace sdpa {
namespace {

constexpr int64_t kReferenceScratchFloats = int64_t{64} << 20;

AttentionShape shape_of(const Problem& p) {
  return AttentionShape{p.batch,  p.heads,    p.kv_heads, p.seq_q,
                        p.seq_kv, p.head_dim, p.causal,   static_cast<float>(p.softmax_scale())};
}

std::size_t bytes(int64_t elements, std::size_t element_bytes) {
  return static_cast<std::size_t>(elements) * element_bytes;
}

int run(const Problem& p, uint64_t seed, const TimingOptions& timing_options) {
  DeviceInfo device;
  std::string error;
  if (!query_device(0, device, error)) {
    fmt::print(stderr, "sdpa-cudnn-engines: {}\n", error);
    return 3;
  }
  const CudnnApi* api = load_cudnn(error);
  if (api == nullptr) {
    fmt::print(stderr, "sdpa-cudnn-engines: {}\n", error);
    return 3;
  }
  CudaStream stream;
  const std::size_t elem = dtype_bytes(p.dtype);
  DeviceBuffer q(bytes(p.q_elements(), elem)), k(bytes(p.kv_elements(), elem)),
      v(bytes(p.kv_elements(), elem));
  DeviceBuffer o(bytes(p.q_elements(), elem)), ref(bytes(p.q_elements(), sizeof(float)));
  const int64_t scratch_floats = std::min(kReferenceScratchFloats, p.score_elements());
  DeviceBuffer scratch(bytes(scratch_floats, sizeof(float))), sums(sizeof(ErrorSums));
  DeviceBuffer stats(bytes(p.batch * p.heads * p.seq_q, sizeof(float)));
  SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, q.get(), p.q_elements(), seed, 0, stream.get()));
  SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, k.get(), p.kv_elements(), seed, 1, stream.get()));
  SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, v.get(), p.kv_elements(), seed, 2, stream.get()));
  SDPA_CHECK_CUDA(launch_reference_attention(p.dtype, shape_of(p), q.get(), k.get(), v.get(),
                                             ref.as<float>(), scratch.as<float>(), scratch_floats,
                                             stream.get()));

  cudnn_graph::Handle handle;
  SDPA_CHECK_CUDNN(api->cudnnSetStream(handle.get(), stream.get()));
  const auto plans = every_sdpa_plan(p, handle.get());
  fmt::print("{} {} {} causal={}, cuDNN {} ({}), {}: {} engine configs finalize\n", device.name,
             p.shape_label(), dtype_name(p.dtype), p.causal ? "yes" : "no", api->version, api->path,
             plans.empty() ? "none"
                           : fmt::format("graph {:.2f} ms, heuristics {:.2f} ms",
                                         plans[0]->graph_ms, plans[0]->heuristics_ms),
             plans.size());
  fmt::print("{:<40} {:<62} {:>9} {:>8} {:>10} {:>8} {:>9}\n", "proposed by", "engine config",
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
    fmt::print("{:<40} {:<62} {:>9} {:>8.1f} {:>19} {:>9.2e}{}\n", plan->chosen_by,
               plan->engine.text(), plan->workspace_bytes, plan->plan_ms, timing,
               check.rel_l2_error, check.passed ? "" : "  FAILED verification");
  }
  return failed == 0 && !plans.empty() ? 0 : 1;
}

}  // namespace
}  // namespace sdpa

int main(int argc, char** argv) {
  using namespace sdpa;
  CLI::App app{"Every cuDNN engine config for one attention problem: verified, then timed."};
  Problem p;
  p.batch = 8;
  p.heads = 16;
  p.seq_q = 4096;
  p.head_dim = 64;
  p.causal = true;
  std::string dtype = "bf16";
  int64_t kv_heads = 0;
  int64_t seq_kv = 0;
  bool no_causal = false;
  uint64_t seed = 1;
  int warmup = 3;
  int min_samples = 10;
  app.add_option("--batch", p.batch)->check(CLI::PositiveNumber);
  app.add_option("--heads", p.heads)->check(CLI::PositiveNumber);
  app.add_option("--kv-heads", kv_heads, "default: --heads");
  app.add_option("--seq", p.seq_q)->check(CLI::PositiveNumber);
  app.add_option("--seq-kv", seq_kv, "default: --seq");
  app.add_option("--head-dim", p.head_dim)->check(CLI::PositiveNumber);
  app.add_option("--dtype", dtype)->check(CLI::IsMember({"bf16", "fp16"}));
  app.add_flag("--no-causal", no_causal);
  app.add_option("--seed", seed);
  app.add_option("--warmup", warmup)->check(CLI::NonNegativeNumber);
  app.add_option("--min-samples", min_samples)->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  p.kv_heads = kv_heads > 0 ? kv_heads : p.heads;
  p.seq_kv = seq_kv > 0 ? seq_kv : p.seq_q;
  p.causal = !no_causal;
  parse_dtype(dtype, p.dtype);
  if (p.heads % p.kv_heads != 0) {
    fmt::print(stderr, "sdpa-cudnn-engines: --kv-heads {} must divide --heads {}\n", p.kv_heads,
               p.heads);
    return 2;
  }
  try {
    TimingOptions timing;
    timing.warmup = warmup;
    timing.stopping.min_samples = min_samples;
    return run(p, seed, timing);
  } catch (const ApiError& e) {
    fmt::print(stderr, "sdpa-cudnn-engines: {}\n", e.what());
    return 1;
  }
}
