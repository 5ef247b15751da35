#include "cli/commands.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <random>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/backend.h"
#include "cli/case_watchdog.h"
#include "cli/device_workers.h"
#include "cli/interrupts.h"
#include "cli/journal.h"
#include "cli/output_writers.h"
#include "cli/run_context.h"
#include "cli/timeline_output.h"
#include "compare/comparison.h"
#include "gpu/attached_tool.h"
#include "io/ceilings_file.h"
#include "measure/ceilings.h"
#include "profile/host_cost.h"
#include "profile/launch_findings.h"
#include "report/report.h"
#include "report/result_sets.h"
#include "run/runner.h"
#include "run/shard_plan.h"
#include "trace/torch_paths.h"
#include "trace/trace_run.h"

namespace sdpa {
namespace {

// --timeline FILE: written by the recorder, when there is one, and checked with the other outputs
// before the run.
OutputWriter timeline_writer(const CliOptions& o, const std::unique_ptr<TimelineRecorder>& timeline) {
  return {{"--timeline", o.timeline_path}, [&timeline](const std::string& path, std::ostream& progress) {
            if (timeline) timeline->write(path, progress);
          }};
}

std::unique_ptr<TimelineRecorder> new_timeline(const CliOptions& o, const std::string& device_name) {
  return std::make_unique<TimelineRecorder>(static_cast<uint64_t>(o.timeline_max_mb) << 20, device_name);
}

void print_dry_run(const SweepPlan& plan, std::ostream& out) {
  out << fmt::format("{:<14} {:<26} {:<5} {:<6} {:>12}  {}\n", "backend", "shape", "dtype", "causal", "memory", "note");
  for (std::size_t i = 0; i < plan.problems.size(); ++i)
    for (std::size_t j = 0; j < plan.backends.size(); ++j) {
      if (!plan.holds(i, j)) continue;  // another shard's
      const Problem& p = plan.problems[i];
      const BackendChoice& c = plan.backends[j];
      const BackendEntry& e = *c.entry;
      std::string note = e.built() ? "" : fmt::format("not built: {}", e.not_built_reason);
      if (c.every_variant && e.built()) note = "one case per variant, listed when it runs";
      if (e.built() && p.paged() && !e.reads_paged_kv) note = paged_kv_unsupported(e.name);
      if (const auto why = pass_unsupported(e, p); why && e.built()) note = "skipped: " + *why;
      out << fmt::format("{:<14} {:<26} {:<5} {:<6} {:>12}  {}\n", c.every_variant ? std::string(e.name) + ":all" : std::string(e.name),
                         p.shape_label(), dtype_name(p.dtype), p.causal ? "yes" : "no",
                         gib_text(predicted_case_bytes(p, e)), note);
    }
}

// --with-torch, a second source of cases: PyTorch's paths on the same problems, when python3 can
// import torch; with a timeline, every record of the traced processes goes in it too.
std::vector<CaseResult> torch_cases(const CliOptions& o, const SweepPlan& plan, TimelineRecorder* timeline,
                                    std::ostream& progress) {
  std::vector<std::string> paths;
  for (const BackendChoice& c : plan.backends)
    if (!c.entry->pytorch_path.empty())  // cudnn:all too: PyTorch picks its own engine
      paths.emplace_back(c.entry->pytorch_path);
  const std::vector<std::string> torch = torch_backends_for(paths);
  if (torch.empty()) {
    progress << "sdpa-prof: --with-torch: PyTorch has no path for these backends\n";
    return {};
  }
  if (const std::string why = torch_unavailable(); !why.empty()) {
    progress << "sdpa-prof: --with-torch: " << why << ": no torch rows\n";
    return {};
  }
  progress << fmt::format("PyTorch: {} on {} problem(s) under trace\n", fmt::join(torch, ", "), plan.problems.size());
  TorchRun run = run_torch_paths(plan.problems, torch, o.device, timeline != nullptr);
  progress << run.stderr_text;
  for (const std::string& note : run.notes) progress << "sdpa-prof: note: " << note << "\n";
  for (ProcessRecords& p : run.records)
    timeline->add(std::move(p.records), static_cast<uint32_t>(p.pid), fmt::format("PyTorch: {} (pid {})", kTorchScriptName, p.pid));
  return std::move(run.cases);
}

TimingOptions timing_options(const CliOptions& o, const Nvml* nvml) {
  TimingOptions timing;
  timing.warmup = o.config.warmup;
  timing.hot = o.config.hot;
  timing.stopping = o.config.stopping;
  timing.stop_requested = [] { return InterruptGuard::signal_seen() != 0; };
  timing.nvml = nvml;
  return timing;
}

// One progress line per finished case: "[3/18] flash B8 H16 S4096 D64 bf16: ok 1.234 ms (2.10 s)".
std::string case_line(const CaseResult& c, std::size_t done, std::size_t planned, double seconds) {
  const std::string time =
      c.timing ? fmt::format(" {:.3f} ms{}", c.timing->median_ms,
                             c.timing->interrupted ? fmt::format(" (interrupted after {} samples)", c.timing->samples) : "")
               : "";
  return fmt::format("[{}/{}] {} {} {}: {}{} ({:.2f} s){}\n", done, std::max(done, planned), c.backend,
                     c.problem.shape_label(), dtype_name(c.problem.dtype), status_name(c.status), time, seconds,
                     setup_text(c.setup));
}

// --resume FILE: the earlier run must be a part of this sweep, on this shard.
void check_resumable(const std::string& path, const RunReport& earlier, const RunReport& here) {
  std::string why = sweep_difference(earlier, here);
  if (why.empty() && earlier.shard != here.shard)
    why = fmt::format("the shard: {} there, {} here", shard_text(earlier.shard), shard_text(here.shard));
  if (!why.empty()) throw InputError(fmt::format("--resume {}: it measured another sweep: {}", path, why));
}

// The sweep's cases: every problem of the config by every backend, this shard's only.
SweepPlan plan_of(const CliOptions& o) {
  std::vector<BackendChoice> backends = resolve_backends(o.config.backends);
  check_sweep_size(o.config, backends.size());
  SweepPlan plan{expand_problems(o.config), std::move(backends)};
  if (o.shard)
    for (const int k : assign_shards(plan, o.shard->count)) plan.selected.push_back(k == o.shard->index);
  return plan;
}

// --resume FILE: its finished cases go in `report` and are not run again.
std::optional<RunReport> take_finished_cases(const CliOptions& o, SweepPlan& plan, RunReport& report) {
  if (o.resume_path.empty()) return std::nullopt;
  RunReport earlier = read_report_file(o.resume_path);
  report.cases = finished_cases(earlier);
  for (const CaseResult& c : report.cases) plan.done.insert(case_key(c.backend, c.problem));
  return earlier;
}

// --case-timeout: past it, the cases so far are written and the process ends.
std::unique_ptr<CaseWatchdog> case_watchdog(const CliOptions& o, RunReport& report, std::mutex& cases_mutex,
                                            const std::vector<OutputWriter>& outputs, std::ostream& progress) {
  if (o.case_timeout_s <= 0) return nullptr;
  return std::make_unique<CaseWatchdog>(o.case_timeout_s, [&, timeout = o.case_timeout_s](const std::string& overran) {
    const std::lock_guard<std::mutex> lock(cases_mutex);
    report.partial = true;
    report.partial_reason = fmt::format("{} ran past --case-timeout {} s", overran, timeout);
    progress << "sdpa-prof: " << report.partial_reason << "; saving the " << report.cases.size()
             << " cases that finished\n";
    write_all(outputs, progress);
    std::_Exit(kExitGpuFailed);
  });
}

// The end of a run: why it stopped early, the table, the files, and the exit code.
int finish_run(const CliOptions& o, RunReport& report, const std::string& stopped_because,
               const std::vector<OutputWriter>& outputs, std::ostream& out, std::ostream& progress) {
  const int signal = InterruptGuard::signal_seen();
  if (!stopped_because.empty()) {
    report.partial = true;
    report.partial_reason = signal != 0 ? std::string("interrupted by ") + stop_signal_name(signal) : stopped_because;
    progress << "sdpa-prof: stopped early: " << report.partial_reason << "; " << report.cases.size()
             << " cases finished\n";
  }
  out << format_table(report, o.table);
  if (o.kernels) out << format_kernels(report, o.table.style);
  if (o.ops) out << format_ops(report, o.table.style);
  out.flush();  // before a file written in place on the same stream (--json /dev/stdout)
  write_all(outputs, progress);
  if (signal != 0) return 128 + signal;
  if (report.partial) return kExitGpuFailed;
  return report.any_failed() ? kExitCaseFailed : kExitOk;
}

}  // namespace

int run_command(const CliOptions& o, std::ostream& out, std::ostream& progress) {
  for (const std::string& note : o.notes) progress << "sdpa-prof: note: " << note << "\n";
  SweepPlan plan = plan_of(o);
  RunReport report;
  report.shard = o.shard;
  std::unique_ptr<TimelineRecorder> timeline;
  std::vector<OutputWriter> outputs = report_writers(o, report);
  outputs.push_back(timeline_writer(o, timeline));
  std::vector<std::string> inputs{o.config_path};
  if (o.resume_path != o.json_path) inputs.push_back(o.resume_path);
  check_writers(outputs, inputs);
  if (!o.devices.empty() || o.all_devices) return run_on_devices(o, out, progress);
  const std::optional<RunReport> earlier = take_finished_cases(o, plan, report);
  if (o.dry_run) {
    if (std::any_of(outputs.begin(), outputs.end(), [](const OutputWriter& w) { return !w.output.path.empty(); }))
      throw InputError(
          "--dry-run measures nothing, so it writes no result files: drop --json/--csv/--md/--html/--samples/--timeline");
    print_dry_run(plan, out);
    return kExitOk;
  }

  // A resumed sweep draws its inputs from the same seed.
  const uint64_t seed = o.config.seed ? *o.config.seed : earlier ? earlier->environment.seed : std::random_device{}();
  const std::unique_ptr<RunContext> context = open_run_context(o, seed, progress);
  if (!context) return kExitGpuFailed;
  report.config = o.config;
  report.environment = context->environment;
  if (earlier) {
    check_resumable(o.resume_path, *earlier, report);
    progress << fmt::format("resuming {}: {} cases kept, {} to run\n", o.resume_path, report.cases.size(),
                            plan.case_count());
  }
  Journal journal(o.json_path);
  if (!o.timeline_path.empty() && context->profiler)
    timeline = new_timeline(o, context->device.name);
  else if (!o.timeline_path.empty())
    progress << "sdpa-prof: no timeline is written to " << o.timeline_path << ": the profile is off ("
             << report.environment.profiler.description << ")\n";
  const InterruptGuard interrupts;
  std::mutex cases_mutex;  // the cases so far, shared with the watchdog
  std::unique_ptr<CaseWatchdog> watchdog = case_watchdog(o, report, cases_mutex, outputs, progress);

  std::size_t done = 0;
  HostStopwatch case_clock;  // the case's whole time: setup, verification, profile, timing
  const std::size_t planned = plan.case_count();  // variants are counted as they run
  const auto on_case = [&](const CaseResult& c) {
    progress << case_line(c, ++done, planned, case_clock.elapsed_us() / 1e6);
    case_clock = HostStopwatch{};
    const std::lock_guard<std::mutex> lock(cases_mutex);
    report.cases.push_back(c);
    journal.write(report);
  };
  const auto on_start = [&](const std::string& backend, const Problem& p) {
    if (watchdog) watchdog->start_case(fmt::format("{} {} {}", backend, p.shape_label(), dtype_name(p.dtype)));
  };
  CaseRecordsCallback on_records;
  if (timeline) on_records = [&](const CaseResult&, ActivityRecords&& records) { timeline->add(std::move(records)); };
  const SweepResult swept =
      run_sweep(plan, context->device, report.environment.seed, timing_options(o, context->nvml.get()),
                {on_start, on_case, on_records}, {context->profiler.get(), context->counters.get()});
  watchdog.reset();
  if (o.with_torch && swept.stopped_because.empty())
    for (const CaseResult& c : torch_cases(o, plan, timeline.get(), progress)) on_case(c);
  add_launch_findings(report.cases);  // they hold a case against its other launch, torch's too
  const int code = finish_run(o, report, swept.stopped_because, outputs, out, progress);
  if (const std::string said = journal.summary(); !said.empty()) progress << said << "\n";
  return code;
}

int trace_command(const CliOptions& o, std::ostream& out, std::ostream& progress) {
  RunReport report;
  std::unique_ptr<TimelineRecorder> timeline;
  std::vector<OutputWriter> outputs = report_writers(o, report);
  outputs.push_back(timeline_writer(o, timeline));
  check_writers(outputs, {});
  TraceRequest request{o.trace_command, find_injection_library(), o.device, !o.timeline_path.empty()};
  TraceOutcome traced = run_traced(request);
  if (!traced.not_started.empty()) {
    progress << "sdpa-prof: trace: " << traced.not_started << "\n";
    return traced.exit_code;
  }
  if (!traced.refused.empty()) throw InputError(traced.refused);
  for (const std::string& note : traced.notes) progress << "sdpa-prof: note: " << note << "\n";

  report.environment = new_environment(o, traced.device, 0);
  std::string cupti;
  for (const ProcessTrace& p : traced.info.processes)
    if (cupti.empty()) cupti = p.cupti;
  report.environment.profiler = Profiler{!traced.info.processes.empty(),
                                         traced.info.processes.empty() ? "no process of the traced command initialized CUDA"
                                                                       : fmt::format("{}, injected into the traced command", cupti)};
  report.environment.counters = Profiler{false, "not collected for a traced program (activity records only)"};
  report.cases = traced.cases;
  report.trace = traced.info;
  for (const ProcessTrace& p : traced.info.processes)
    if (p.partial && !report.partial) {
      report.partial = true;
      report.partial_reason = fmt::format("process {}: {}", p.pid, p.partial_reason);
    }
  if (!report.cases.empty()) {
    out << format_table(report, o.table);
    if (o.kernels) out << format_kernels(report, o.table.style);
    if (o.ops) out << format_ops(report, o.table.style);
  }
  out << format_trace(*report.trace);
  out.flush();
  if (!o.timeline_path.empty()) {
    timeline = new_timeline(o, traced.device ? traced.device->name : "GPU");
    for (ProcessRecords& p : traced.records)
      timeline->add(std::move(p.records), static_cast<uint32_t>(p.pid), fmt::format("{} (pid {})", report.trace->command, p.pid));
  }
  write_all(outputs, progress);
  return traced.exit_code;
}

int ceilings_command(const CliOptions& o, std::ostream& out, std::ostream& progress) {
  DeviceInfo device;
  std::string error;
  if (!query_device(o.device, device, error)) {
    progress << "sdpa-prof: " << error << "\n";
    return kExitGpuFailed;
  }
  std::optional<Ceilings> c = o.remeasure ? std::nullopt : load_cached_ceilings(device, ceilings_method());
  const bool cached = c.has_value();
  if (!c) c = measure_and_cache_ceilings(device, attached_gpu_tool(), progress);
  out << fmt::format("{} ({})\n", c->device_name, c->device_uuid);
  out << fmt::format("  bf16 tensor-core GEMM  {:8.1f} TFLOP/s\n", c->bf16_gemm_tflops);
  out << fmt::format("  fp16 tensor-core GEMM  {:8.1f} TFLOP/s\n", c->fp16_gemm_tflops);
  out << fmt::format("  device-to-device copy  {:8.2f} TB/s (read + write)\n", c->copy_tb_per_s);
  out << fmt::format("  HBM read              {:8.2f} TB/s (read only)\n", c->read_tb_per_s);
  if (cached) out << fmt::format("cached in {}, ", ceilings_cache_path(device));
  out << fmt::format("measured at {}: {}\n", c->measured_at, c->method);
  return kExitOk;
}

int compare_command(const CliOptions& o, std::ostream& out, std::ostream& err) {
  RunReport base;
  RunReport next;
  Comparison comparison;
  const std::vector<OutputWriter> outputs = comparison_writers(o, comparison, base, next);
  check_writers(outputs, o.files);
  base = read_report_file(o.files.at(0));
  next = read_report_file(o.files.at(1));
  comparison = compare_reports(base, next, o.threshold, o.strict_clock);
  const auto compared = std::count_if(comparison.cases.begin(), comparison.cases.end(), [](const CaseComparison& c) {
    return c.verdict != Verdict::only_in_base && c.verdict != Verdict::only_in_new;
  });
  if (compared == 0 && !o.allow_empty)
    throw InputError(fmt::format("nothing to compare: {} and {} have no case in common (--allow-empty accepts that)",
                                 o.files.at(0), o.files.at(1)));
  if (o.strict_env && !comparison.environment_differences.empty()) {
    for (const std::string& d : comparison.environment_differences) err << "environment differs: " << d << "\n";
    throw InputError("--strict-env: the two results come from different devices or library versions");
  }
  out << format_comparison_table(comparison, o.table.style);
  out.flush();
  write_all(outputs, err);
  return comparison.any_regression() ? kExitCaseFailed : kExitOk;
}

int report_command(const CliOptions& o, std::ostream& out, std::ostream& progress) {
  RunReport report;
  const std::vector<OutputWriter> outputs = report_writers(o, report);
  check_writers(outputs, o.files);
  report = read_report_file(o.files.at(0));
  if (o.format == "md") {
    out << format_markdown(report) << (o.ops ? format_ops_markdown(report) : "");
  } else if (o.format == "csv") {
    out << (o.ops ? format_ops_csv(report) : format_csv(report));
  } else {
    out << format_table(report, o.table);
    if (o.kernels) out << format_kernels(report, o.table.style);
    if (o.ops) out << format_ops(report, o.table.style);
    if (report.trace) out << format_trace(*report.trace);
  }
  out.flush();
  write_all(outputs, progress);
  return kExitOk;
}

int merge_command(const CliOptions& o, std::ostream& out, std::ostream& progress) {
  RunReport merged;
  const std::vector<OutputWriter> outputs = report_writers(o, merged);
  if (std::all_of(outputs.begin(), outputs.end(), [](const OutputWriter& w) { return w.output.path.empty(); }))
    throw InputError("merge: name the merged result's file: --json FILE (and --csv, --md, --html as wanted)");
  check_writers(outputs, o.files);
  std::vector<NamedReport> parts;
  for (const std::string& path : o.files) parts.push_back({path, read_report_file(path)});
  merged = merge_reports(parts);
  out << fmt::format("merged {} files: {} cases{}\n", parts.size(), merged.cases.size(),
                     merged.partial ? fmt::format(", partial: {}", merged.partial_reason) : "");
  out.flush();
  write_all(outputs, progress);
  return kExitOk;
}

int list_command(std::ostream& out) {
  out << fmt::format("{:<14} {:<6} {:<11} {:<10} {:<7} {:<8} {:<6} {}\n", "backend", "built", "dtypes", "head dims",
                     "archs", "passes", "paged", "what it is");
  for (const BackendEntry& e : backend_registry())
    out << fmt::format("{:<14} {:<6} {:<11} {:<10} {:<7} {:<8} {:<6} {}{}\n", e.name, e.built() ? "yes" : "no",
                       e.dtypes, e.head_dims, e.archs, e.has_backward() ? "fwd, bwd" : "fwd",
                       e.reads_paged_kv ? "yes" : "no", e.summary,
                       e.built() ? "" : fmt::format(" [not built: {}]", e.not_built_reason));
  // Where trace and --with-torch find what they run, or why they would not.
  const auto found = [](const std::function<std::string()>& find) {
    try {
      return find();
    } catch (const InputError& e) {
      return fmt::format("not found: {}", e.what());
    }
  };
  out << fmt::format("\ninjection library (trace, --with-torch): {}\n", found(find_injection_library));
  out << fmt::format("PyTorch script (--with-torch): {}\n", found(find_torch_script));
  return kExitOk;
}

}  // namespace sdpa
