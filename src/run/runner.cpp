#include "run/runner.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "gpu/check.h"
#include "gpu/cuda_graph.h"
#include "gpu/device_buffer.h"
#include "gpu/problem_shape.h"
#include "measure/l2_clean.h"
#include "model/errors.h"
#include "model/range_name.h"
#include "profile/counter_pass.h"
#include "profile/findings.h"
#include "profile/host_cost.h"
#include "profile/profile_pass.h"
#include "random_fill.h"
#include "reference.h"
#include "reference_backward.h"
#include "run/paged_kv_pool.h"
#include "run/verify.h"

namespace sdpa {
namespace {

std::size_t bytes_of(int64_t elements, std::size_t element_bytes) {
  return static_cast<std::size_t>(elements) * element_bytes;
}

// What a problem with a backward pass adds: the upstream gradient dO, the backend's gradients,
// and the reference's (fp32) with its per-row statistics.
struct GradientData {
  explicit GradientData(const Problem& p)
      : d_out(bytes_of(p.q_elements(), dtype_bytes(p.dtype))),
        dq(bytes_of(p.q_elements(), dtype_bytes(p.dtype))),
        dk(bytes_of(p.kv_elements(), dtype_bytes(p.dtype))),
        dv(bytes_of(p.kv_elements(), dtype_bytes(p.dtype))),
        reference_dq(bytes_of(p.q_elements(), sizeof(float))),
        reference_dk(bytes_of(p.kv_elements(), sizeof(float))),
        reference_dv(bytes_of(p.kv_elements(), sizeof(float))),
        row_stats(bytes_of(reference_backward_row_stats_floats(attention_shape(p)), sizeof(float))) {}

  DeviceBuffer d_out, dq, dk, dv, reference_dq, reference_dk, reference_dv, row_stats;
};

// Inputs, output and reference of one problem, shared by every backend that runs it.
struct ProblemData {
  explicit ProblemData(const Problem& p)
      : q(bytes_of(p.q_elements(), dtype_bytes(p.dtype))),
        k(bytes_of(p.kv_elements(), dtype_bytes(p.dtype))),
        v(bytes_of(p.kv_elements(), dtype_bytes(p.dtype))),
        o(bytes_of(p.q_elements(), dtype_bytes(p.dtype))),
        reference(bytes_of(p.q_elements(), sizeof(float))),
        scratch(bytes_of(reference_scratch_floats(p), sizeof(float))),
        sums(sizeof(ErrorSums)) {
    if (p.has_backward()) grads.emplace(p);
    if (p.paged()) paged.emplace(p);
  }

  DeviceBuffer q, k, v, o, reference, scratch, sums;
  std::optional<GradientData> grads;
  std::optional<PagedKvPool> paged;  // a paged problem's K and V, in pages
};

// A choice's name before its variants are known: "flash", or "cudnn:all".
std::string choice_name(const BackendChoice& c) {
  return c.every_variant ? std::string(c.entry->name) + ":all" : std::string(c.entry->name);
}

std::string verification_errors(const Verification& v) {
  return fmt::format(
      "rel L2 {:.2e} (tolerance {:.1e}), max abs {:.2e} (tolerance {:.2e}), {} non-finite outputs",
      v.rel_l2_error, v.rel_l2_tolerance, v.max_abs_error, v.max_abs_tolerance, v.non_finite);
}

// One case, as named steps: admit (can the backend run it, does its workspace fit), prepare,
// verify the first forward, profile, time, reverify after the timing pass, count. A step that
// fails leaves its reason in the result; the later steps are not run.
class CaseRun {
 public:
  CaseRun(const BackendEntry& entry, const std::string& variant, const Problem& p,
          const DeviceInfo& device, ProblemData& data, cudaStream_t stream)
      : entry_(entry), variant_(variant), p_(p), device_(device), data_(data), stream_(stream) {
    result.backend = case_backend_name(entry, variant);
    result.problem = p;
    result.predicted_bytes = predicted_case_bytes(p, entry);
  }

  CaseResult result;

  bool admit() {
    if (auto why = cannot_run(entry_, p_, device_)) {
      result.reason = *why;
      return false;
    }
    const std::size_t workspace = entry_.workspace_bytes(p_);
    if (const std::size_t free_bytes = free_device_memory(); workspace > free_bytes) {
      result.reason = fmt::format("needs {} bytes ({}) of workspace, {} free", workspace,
                                  gib_text(workspace), gib_text(free_bytes));
      return false;
    }
    return true;
  }

  // False, the case skipped with the backend's reason, when the backend declines it here.
  bool prepare() {
    const HostStopwatch setup;
    backend_ = entry_.create(variant_);
    try {
      backend_->prepare(p_, stream_);
    } catch (const CaseDeclined& e) {
      result.reason = e.what();
      return false;
    }
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream_));
    host_.setup_ms = setup.elapsed_us() / 1e3;
    result.setup = backend_->setup();
    return true;
  }

  // A graph case: one call as the backend makes it (a warm-up that takes lazy one-time work, such
  // as module loading and a library's first-call heuristics, out of the capture, as PyTorch's CUDA
  // graph guide prescribes), then the pass captured into a graph that every later call replays. A
  // call that cannot be captured skips the case with the error: it is never run eagerly instead.
  bool capture() {
    if (p_.pass == AttentionPass::backward) forward(stream_);
    step(stream_);
    std::string why_not;
    graph_ = CapturedCall::capture([this](cudaStream_t s) { step(s); }, stream_, why_not);
    if (!graph_) {
      result.reason = why_not;
      return false;
    }
    result.setup.times_ms.emplace_back("graph capture", graph_->capture_ms());
    result.setup.times_ms.emplace_back("graph instantiate", graph_->instantiate_ms());
    return true;
  }

  // The first call of the case's pass, into poisoned outputs, timed on the host and checked against
  // the reference. A backward alone first runs the forward it reads (untimed, its O checked too).
  // In a graph case the call is the graph's first replay: what is checked is what the graph wrote.
  bool verify_first_call(std::size_t free_before_problem) {
    poison_outputs(true);
    if (p_.pass == AttentionPass::backward) forward(stream_);
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream_));
    const HostStopwatch first_call;
    call(stream_);
    host_.first_call_us = first_call.elapsed_us();
    result.host = host_;
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream_));
    // Inputs, reference and whatever the backend and its libraries allocated up to the first call.
    result.measured_bytes =
        free_before_problem - std::min(free_before_problem, free_device_memory());
    result.verification = verify();
    if (result.verification->passed) return true;
    result.status = CaseStatus::failed;
    result.reason =
        fmt::format("verification failed: {}", verification_errors(*result.verification));
    return false;
  }

  void profile(CuptiSession& profiler, ActivityRecords* records) {
    result.profile =
        profile_forwards(profiler, forwarder(), stream_, range_prefix(result.backend, p_),
                         kProfileForwards, device_, records);
    result.profile->findings = profile_findings(*result.profile, p_.pass);
  }

  void time(const TimingOptions& timing) {
    result.timing = time_forward(forwarder(), stream_, timing, device_);
    result.host->per_call_us = host_us_per_call(forwarder(), stream_, kHostCostCalls);
    result.host->calls = kHostCostCalls;
  }

  // Once more after every timed call, into poisoned outputs: state a backend keeps across launches
  // (workspaces, counters of a persistent grid) must leave the last call as right as the first.
  bool reverify() {
    poison_outputs(p_.has_forward());
    call(stream_);
    const Verification again = verify();
    if (again.passed) return true;
    // No figure of a kernel that turned wrong is reported: the case is failed, as if untimed.
    result.status = CaseStatus::failed;
    result.reason =
        fmt::format("verification failed after the timing pass (the first forward passed): {}",
                    verification_errors(again));
    result.verification = again;
    result.timing.reset();
    result.profile.reset();
    return false;
  }

  // The counter pass after the timing pass: its replays (and the power they draw under the
  // 700 W cap) cannot shift the clock the case's own samples ran at. Each pass starts with a cold
  // L2 (unless the samples run hot), and a clean one: what is counted is what the forward's own
  // kernels move. The cleaner (a buffer of 4 L2s and a cuBLAS handle) is made at the first
  // counted case and kept for the sweep.
  void count(CounterSession& counters, const TimingOptions& timing,
             std::optional<L2Clean>& l2_clean) {
    if (!result.profile) return;
    if (!timing.hot && !l2_clean) l2_clean.emplace(device_.l2_bytes);
    const auto before_pass = [&](cudaStream_t s) {
      if (!timing.hot) l2_clean->clean(s);
    };
    count_forward(counters, *result.profile, forwarder(), before_pass, stream_, p_,
                  device_.sm_count,
                  entry_.kernel_dram_bytes != nullptr && !p_.has_backward()
                      ? std::optional(entry_.kernel_dram_bytes(p_))
                      : std::nullopt);
  }

 private:
  // A paged problem's backend reads K and V from the page pool alone.
  AttentionTensors tensors() const {
    if (data_.paged) return {data_.q.get(), nullptr, nullptr, data_.o.get(), &data_.paged->view()};
    return {data_.q.get(), data_.k.get(), data_.v.get(), data_.o.get()};
  }
  void forward(cudaStream_t s) { backend_->run(tensors(), s); }
  // What the case times: its pass.
  void step(cudaStream_t s) {
    if (p_.has_forward()) forward(s);
    if (p_.has_backward()) {
      GradientData& g = *data_.grads;
      backend_->backward(tensors(), {g.d_out.get(), g.dq.get(), g.dk.get(), g.dv.get()}, s);
    }
  }
  // One call of the case: the pass as the backend launches it, or in a graph case one replay.
  void call(cudaStream_t s) {
    if (graph_) {
      graph_->launch(s);
    } else {
      step(s);
    }
  }
  std::function<void(cudaStream_t)> forwarder() {
    return [this](cudaStream_t s) { call(s); };
  }
  // NaN into what the next call must write: a part it leaves unwritten fails verification.
  void poison_outputs(bool output) {
    if (output) SDPA_CHECK_CUDA(launch_poison(p_.dtype, data_.o.get(), p_.q_elements(), stream_));
    if (!p_.has_backward()) return;
    GradientData& g = *data_.grads;
    SDPA_CHECK_CUDA(launch_poison(p_.dtype, g.dq.get(), p_.q_elements(), stream_));
    SDPA_CHECK_CUDA(launch_poison(p_.dtype, g.dk.get(), p_.kv_elements(), stream_));
    SDPA_CHECK_CUDA(launch_poison(p_.dtype, g.dv.get(), p_.kv_elements(), stream_));
  }
  // O, and with a backward dQ (a sum over the keys), dK and dV (over the group's query rows).
  Verification verify() {
    ErrorSums* sums = data_.sums.as<ErrorSums>();
    std::vector<Verification> checks{verify_output(p_.dtype, p_.seq_kv, data_.o.get(),
                                                   data_.reference.as<float>(), p_.q_elements(), sums, stream_)};
    if (p_.has_backward()) {
      const GradientData& g = *data_.grads;
      const int64_t query_rows = p_.group_size() * p_.seq_q;
      double dv_rms = 0;  // the floor of dQ's and dK's scale (run/verify.h)
      checks.push_back(verify_gradient(p_.dtype, query_rows, g.dv.get(), g.reference_dv.as<float>(),
                                       p_.kv_elements(), sums, stream_, "dV", 0, &dv_rms));
      checks.push_back(verify_gradient(p_.dtype, p_.seq_kv, g.dq.get(), g.reference_dq.as<float>(),
                                       p_.q_elements(), sums, stream_, "dQ", dv_rms));
      checks.push_back(verify_gradient(p_.dtype, query_rows, g.dk.get(), g.reference_dk.as<float>(),
                                       p_.kv_elements(), sums, stream_, "dK", dv_rms));
    }
    return worst_verification(checks);
  }

  const BackendEntry& entry_;
  const std::string& variant_;
  const Problem& p_;
  const DeviceInfo& device_;
  ProblemData& data_;
  cudaStream_t stream_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<CapturedCall> graph_;  // a graph case's call; gone before the backend it points into
  HostCost host_;
};

CaseResult run_case(const BackendEntry& entry, const std::string& variant, const Problem& p,
                    const DeviceInfo& device, ProblemData& data, cudaStream_t stream,
                    const TimingOptions& timing, std::size_t free_before_problem,
                    CuptiSession* profiler, CounterSession* counters,
                    std::optional<L2Clean>& l2_clean, ActivityRecords* records) {
  CaseRun run(entry, variant, p, device, data, stream);
  if (!run.admit() || !run.prepare()) return run.result;
  if (p.launch == LaunchMode::graph && !run.capture()) return run.result;
  if (!run.verify_first_call(free_before_problem)) return run.result;
  if (profiler != nullptr) run.profile(*profiler, records);
  run.time(timing);
  if (!run.reverify()) return run.result;
  if (counters != nullptr) run.count(*counters, timing, l2_clean);
  run.result.status = CaseStatus::ok;
  return run.result;
}

// Fresh inputs per problem (the seed and the problem's index select the random streams) and the
// reference output every backend is checked against.
void fill_inputs_and_reference(const Problem& p, uint64_t seed, uint64_t problem_index,
                               ProblemData& data, cudaStream_t stream) {
  SDPA_CHECK_CUDA(
      launch_fill_normal(p.dtype, data.q.get(), p.q_elements(), seed, 3 * problem_index, stream));
  SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, data.k.get(), p.kv_elements(), seed,
                                     3 * problem_index + 1, stream));
  SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, data.v.get(), p.kv_elements(), seed,
                                     3 * problem_index + 2, stream));
  SDPA_CHECK_CUDA(launch_reference_attention(
      p.dtype, attention_shape(p), data.q.get(), data.k.get(), data.v.get(),
      data.reference.as<float>(), data.scratch.as<float>(), reference_scratch_floats(p), stream));
  if (data.grads) {
    GradientData& g = *data.grads;
    // dO from streams of its own: above every problem's three input streams.
    constexpr uint64_t kGradientStreams = uint64_t{1} << 40;
    SDPA_CHECK_CUDA(launch_fill_normal(p.dtype, g.d_out.get(), p.q_elements(), seed,
                                       kGradientStreams + problem_index, stream));
    SDPA_CHECK_CUDA(launch_reference_attention_backward(
        p.dtype, attention_shape(p), data.q.get(), data.k.get(), data.v.get(), g.d_out.get(),
        g.reference_dq.as<float>(), g.reference_dk.as<float>(), g.reference_dv.as<float>(),
        g.row_stats.as<float>(), data.scratch.as<float>(), reference_scratch_floats(p), stream));
  }
  // The same K and V in pages, dealt in an order of this problem's own.
  if (data.paged) data.paged->fill(data.k.get(), data.v.get(), seed ^ (problem_index * 0x9e3779b97f4a7c15ull), stream);
  SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));
}

// After a failure: empty when the GPU context still works (the error was the case's own: out of
// memory, a bad launch), else the sticky error that poisons every later call.
std::string context_error() {
  (void)cudaGetLastError();  // clears a non-sticky error
  const cudaError_t err = cudaDeviceSynchronize();
  if (err == cudaSuccess && cudaGetLastError() == cudaSuccess) return {};
  return fmt::format("{}: {}", cudaGetErrorName(err), cudaGetErrorString(err));
}

}  // namespace

int64_t reference_scratch_floats(const Problem& p) {
  constexpr int64_t kMaxFloats = int64_t{64} << 20;  // 256 MB
  return std::min(kMaxFloats, p.score_elements());
}

std::size_t shared_case_bytes(const Problem& p) {
  const std::size_t elem = dtype_bytes(p.dtype);
  std::size_t bytes = bytes_of(2 * p.q_elements(), elem) + bytes_of(2 * p.kv_elements(), elem) +
                      bytes_of(p.q_elements(), sizeof(float)) +
                      bytes_of(reference_scratch_floats(p), sizeof(float)) + sizeof(ErrorSums) +
                      PagedKvPool::bytes(p);
  if (p.has_backward()) {
    // dO and dQ, dK, dV in the dtype, the reference's gradients and row statistics in fp32.
    bytes += bytes_of(2 * p.q_elements(), elem) + bytes_of(2 * p.kv_elements(), elem) +
             bytes_of(p.q_elements() + 2 * p.kv_elements() +
                          reference_backward_row_stats_floats(attention_shape(p)),
                      sizeof(float));
  }
  return bytes;
}

std::size_t predicted_case_bytes(const Problem& p, const BackendEntry& backend) {
  return shared_case_bytes(p) + (backend.built() ? backend.workspace_bytes(p) : 0);
}

bool SweepPlan::left_to_run(std::size_t problem, std::size_t choice) const {
  return holds(problem, choice) && !done.contains(case_key(choice_name(backends[choice]), problems[problem]));
}

std::size_t SweepPlan::case_count() const {
  std::size_t count = 0;
  for (std::size_t i = 0; i < problems.size(); ++i)
    for (std::size_t j = 0; j < backends.size(); ++j) count += left_to_run(i, j);
  return count;
}

SweepResult run_sweep(const SweepPlan& plan, const DeviceInfo& device, uint64_t seed,
                      const TimingOptions& timing, const SweepHooks& hooks,
                      const SweepPasses& passes) {
  SweepResult out;
  CudaStream stream;
  std::optional<L2Clean> l2_clean;
  const auto stop_requested = [&] { return timing.stop_requested && timing.stop_requested(); };
  uint64_t problem_index = 0;
  for (const Problem& p : plan.problems) {
    ++problem_index;
    const std::size_t problem_at = problem_index - 1;
    // A problem none of whose cases is left to run here costs no inputs and no reference.
    bool any_to_run = false;
    for (std::size_t j = 0; j < plan.backends.size(); ++j) any_to_run |= plan.left_to_run(problem_at, j);
    if (!any_to_run) continue;
    if (stop_requested()) {
      out.stopped_because = "interrupted";
      return out;
    }
    const auto finish = [&](CaseResult r) {
      if (hooks.on_case) hooks.on_case(r);
      out.cases.push_back(std::move(r));
    };
    const auto unrun = [&](const BackendChoice& choice, CaseStatus status,
                           const std::string& reason) {
      CaseResult r;
      r.backend = choice_name(choice);
      r.problem = p;
      r.predicted_bytes = predicted_case_bytes(p, *choice.entry);
      r.status = status;
      r.reason = reason;
      return r;
    };
    const auto skip_all = [&](CaseStatus status, const std::string& reason) {
      for (std::size_t j = 0; j < plan.backends.size(); ++j)
        if (plan.left_to_run(problem_at, j)) finish(unrun(plan.backends[j], status, reason));
    };
    // Nor does a problem that no backend here can run (a paged one, today): each says why.
    bool any_can_run = false;
    for (std::size_t j = 0; j < plan.backends.size() && !any_can_run; ++j)
      any_can_run = plan.left_to_run(problem_at, j) && !cannot_run(*plan.backends[j].entry, p, device);
    if (!any_can_run) {
      for (std::size_t j = 0; j < plan.backends.size(); ++j)
        if (plan.left_to_run(problem_at, j))
          finish(unrun(plan.backends[j], CaseStatus::skipped, *cannot_run(*plan.backends[j].entry, p, device)));
      continue;
    }
    const std::size_t shared = shared_case_bytes(p);
    const std::size_t free_before_problem = free_device_memory();
    if (const std::size_t free_bytes = free_before_problem; shared > free_bytes) {
      skip_all(CaseStatus::skipped,
               fmt::format("needs {} bytes ({}) for inputs and reference, {} free", shared,
                           gib_text(shared), gib_text(free_bytes)));
      continue;
    }
    if (p.head_dim > 256) {
      skip_all(CaseStatus::skipped, "the reference handles head dims up to 256");
      continue;
    }

    std::optional<ProblemData> data;
    try {
      data.emplace(p);
      fill_inputs_and_reference(p, seed, problem_index, *data, stream.get());
    } catch (const ApiError& e) {
      if (std::string poisoned = context_error(); !poisoned.empty()) {
        out.stopped_because = fmt::format("the GPU context is unusable after preparing {}: {}",
                                          p.shape_label(), poisoned);
        return out;
      }
      skip_all(CaseStatus::failed, fmt::format("inputs and reference: {}", e.what()));
      continue;
    }

    for (std::size_t choice_at = 0; choice_at < plan.backends.size(); ++choice_at) {
      const BackendChoice& choice = plan.backends[choice_at];
      if (!plan.left_to_run(problem_at, choice_at)) continue;
      const BackendEntry& entry = *choice.entry;
      std::vector<std::string> variants{""};
      if (choice.every_variant) {
        if (auto why = cannot_run(entry, p, device)) {
          finish(unrun(choice, CaseStatus::skipped, *why));
          continue;
        }
        try {
          variants = entry.variants(p);
        } catch (const CaseDeclined& e) {
          finish(unrun(choice, CaseStatus::skipped, e.what()));
          continue;
        } catch (const ApiError& e) {
          finish(
              unrun(choice, CaseStatus::failed, fmt::format("listing its variants: {}", e.what())));
          continue;
        }
      }
      for (const std::string& variant : variants) {
        if (stop_requested()) {
          out.stopped_because = "interrupted";
          return out;
        }
        const std::string name = case_backend_name(entry, variant);
        if (plan.done.contains(case_key(name, p))) continue;
        if (hooks.on_start) hooks.on_start(name, p);
        CaseResult r;
        try {
          ActivityRecords recorded;
          r = run_case(entry, variant, p, device, *data, stream.get(), timing, free_before_problem,
                       passes.profiler, passes.counters, l2_clean,
                       hooks.on_records ? &recorded : nullptr);
          if (hooks.on_records && r.profile) hooks.on_records(r, std::move(recorded));
        } catch (const ApiError& e) {
          r = unrun(choice, CaseStatus::failed, e.what());
          r.backend = name;
          if (std::string poisoned = context_error(); !poisoned.empty()) {
            finish(std::move(r));
            out.stopped_because = fmt::format("the GPU context is unusable after {} {}: {}", name,
                                              p.shape_label(), poisoned);
            return out;
          }
        }
        finish(std::move(r));
      }
    }
  }
  return out;
}

}  // namespace sdpa
