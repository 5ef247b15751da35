#include "cli/commands.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <fstream>
#include <ostream>
#include <random>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "gpu/nvml.h"
#include "io/atomic_file.h"
#include "io/ceilings_file.h"
#include "io/json_input.h"
#include "measure/ceilings.h"
#include "profile/counter_session.h"
#include "profile/cupti_session.h"
#include "profile/host_cost.h"
#include "compare/comparison.h"
#include "backends/backend.h"
#include "report/report.h"
#include "run/runner.h"
#include "io/time_text.h"
#include "trace/torch_paths.h"
#include "trace/trace_run.h"
#include "cli/case_watchdog.h"
#include "cli/interrupts.h"
#include "cli/timeline_output.h"
#include "cli/version.h"

namespace sdpa {
namespace {

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 ? name : "";
}

RunReport load_report(const std::string& path) {
  const nlohmann::json j = read_untrusted_json_file(path);
  try {
    return report_from_json(j);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  }
}

Ceilings cached_or_measured_ceilings(const DeviceInfo& device, std::ostream& progress) {
  if (std::optional<Ceilings> cached = load_cached_ceilings(device)) return *cached;
  progress << "measuring this GPU's ceilings once (cached in " << ceilings_cache_path(device) << ")\n";
  Ceilings measured = measure_ceilings(device);
  if (const std::string why = save_ceilings(device, measured); !why.empty()) progress << "sdpa-prof: warning: " << why << "\n";
  return measured;
}

// Every kept timing sample of every timed case, keyed like the cases (for --samples FILE).
nlohmann::json samples_to_json(const RunReport& report) {
  nlohmann::json cases = nlohmann::json::array();
  for (const CaseResult& c : report.cases)
    if (c.timing)
      cases.push_back({{"backend", c.backend},
                       {"shape", c.problem.shape_label()},
                       {"dtype", dtype_name(c.problem.dtype)},
                       {"causal", c.problem.causal},
                       {"samples_ms", c.timing->samples_ms}});
  return nlohmann::json{{"schema", "sdpa-prof/samples"}, {"schema_version", 1}, {"cases", cases}};
}

void write_outputs(const CliOptions& o, const RunReport& report, std::ostream& progress) {
  const auto write = [&](const std::string& path, const std::string& content) {
    if (path.empty()) return;
    write_file_atomically(path, content);
    progress << "wrote " << path << (report.partial ? " (partial)" : "") << "\n";
  };
  write(o.json_path, report_to_json(report).dump(2) + "\n");
  write(o.samples_path, samples_to_json(report).dump(1) + "\n");
  write(o.csv_path, format_csv(report));
  write(o.md_path, format_markdown(report));
  write(o.html_path, format_html(report));
}

void print_dry_run(const SweepPlan& plan, std::ostream& out) {
  out << fmt::format("{:<14} {:<26} {:<5} {:<6} {:>12}  {}\n", "backend", "shape", "dtype", "causal", "memory", "note");
  for (const Problem& p : plan.problems)
    for (const BackendChoice& c : plan.backends) {
      const BackendEntry& e = *c.entry;
      std::string note = e.built() ? "" : fmt::format("not built: {}", e.not_built_reason);
      if (c.every_variant && e.built()) note = "one case per variant, listed when it runs";
      out << fmt::format("{:<14} {:<26} {:<5} {:<6} {:>12}  {}\n", c.every_variant ? std::string(e.name) + ":all" : std::string(e.name),
                         p.shape_label(), dtype_name(p.dtype), p.causal ? "yes" : "no",
                         gib_text(predicted_case_bytes(p, e)), note);
    }
}

// --with-torch: PyTorch's paths on the same problems, when python3 can import torch; with a
// timeline, every record of the traced processes goes in it too.
void add_torch_cases(const CliOptions& o, const SweepPlan& plan, RunReport& report, TimelineRecorder* timeline,
                     std::ostream& progress) {
  std::vector<std::string> paths;
  for (const BackendChoice& c : plan.backends)
    if (!c.entry->pytorch_path.empty())  // cudnn:all too: PyTorch picks its own engine
      paths.emplace_back(c.entry->pytorch_path);
  const std::vector<std::string> torch = torch_backends_for(paths);
  if (torch.empty()) {
    progress << "sdpa-prof: --with-torch: PyTorch has no path for these backends\n";
    return;
  }
  if (const std::string why = torch_unavailable(); !why.empty()) {
    progress << "sdpa-prof: --with-torch: " << why << ": no torch rows\n";
    return;
  }
  progress << fmt::format("PyTorch: {} on {} problem(s) under trace\n", fmt::join(torch, ", "), plan.problems.size());
  TorchRun run = run_torch_paths(plan.problems, torch, o.device, timeline != nullptr);
  for (const std::string& note : run.notes) progress << "sdpa-prof: note: " << note << "\n";
  for (CaseResult& c : run.cases) {
    progress << fmt::format("{} {} {}: {}{}\n", c.backend, c.problem.shape_label(), dtype_name(c.problem.dtype),
                            status_name(c.status), c.timing ? fmt::format(" {:.3f} ms", c.timing->median_ms) : "");
    report.cases.push_back(std::move(c));
  }
  for (ProcessRecords& p : run.records)
    timeline->add(std::move(p.records), static_cast<uint32_t>(p.pid), fmt::format("PyTorch: {} (pid {})", kTorchScriptName, p.pid));
}

}  // namespace

int run_command(const CliOptions& o, std::ostream& out, std::ostream& progress) {
  for (const std::string& note : o.notes) progress << "sdpa-prof: note: " << note << "\n";
  std::vector<BackendChoice> backends = resolve_backends(o.config.backends);
  check_sweep_size(o.config, backends.size());
  SweepPlan plan{expand_problems(o.config), std::move(backends)};
  check_outputs({{"--json", o.json_path},
                 {"--samples", o.samples_path},
                 {"--csv", o.csv_path},
                 {"--md", o.md_path},
                 {"--html", o.html_path},
                 {"--timeline", o.timeline_path}},
                {o.config_path});
  if (o.dry_run && !(o.json_path.empty() && o.samples_path.empty() && o.csv_path.empty() && o.md_path.empty() &&
                     o.html_path.empty() && o.timeline_path.empty()))
    throw InputError(
        "--dry-run measures nothing, so it writes no result files: drop --json/--csv/--md/--html/--samples/--timeline");
  if (o.dry_run) {
    print_dry_run(plan, out);
    return kExitOk;
  }

  RunReport report;
  std::string error;
  DeviceInfo device;
  if (!query_device(o.device, device, error)) {
    progress << "sdpa-prof: " << error << "\n";
    return kExitGpuFailed;
  }
  std::string nvml_why;
  const std::unique_ptr<Nvml> nvml = Nvml::open(device.uuid, nvml_why);
  if (nvml && device.sm_clock_khz == 0)  // the runtime did not say: NVML's peak is the same figure
    device.sm_clock_khz = static_cast<int>(1000 * nvml->max_sm_clock_mhz().value_or(0));
  report.config = o.config;
  report.environment = Environment{kToolVersion, kGitSha, o.command_line, host_name(), utc_now_iso8601(),
                                   o.config.seed ? *o.config.seed : std::random_device{}(), device, {}, {}, {}, {}};
  progress << fmt::format("{} ({} SMs, {}), driver {}, CUDA runtime {}, seed {}\n", device.name,
                          device.sm_count, gib_text(device.total_memory), version_text(device.driver_version),
                          version_text(device.runtime_version), report.environment.seed);
  std::unique_ptr<CuptiSession> profiler;
  Profiler& profiler_info = report.environment.profiler;
  if (o.profile) {
    profiler = CuptiSession::start(profiler_info.description);
    if (profiler) profiler_info = Profiler{true, profiler->description()};
  } else {
    profiler_info.description = "--no-profile";
  }
  progress << fmt::format("profile: {}{}\n", profiler_info.enabled ? "" : "off, timing only: ", profiler_info.description);
  std::unique_ptr<CounterSession> counters;
  Profiler& counters_info = report.environment.counters;
  if (o.config.counters && profiler) {
    counters = CounterSession::start(o.device, counters_info.description);
    if (counters) counters_info = Profiler{true, counters->description()};
  } else {
    counters_info.description = o.config.counters ? "they need the profile pass" : "--no-counters";
  }
  progress << fmt::format("counters: {}{}\n", counters_info.enabled ? "" : "off, the sweep goes on without them: ",
                          counters_info.description);
  std::unique_ptr<TimelineRecorder> timeline;
  if (!o.timeline_path.empty() && profiler)
    timeline = std::make_unique<TimelineRecorder>(static_cast<uint64_t>(o.timeline_max_mb) << 20);
  else if (!o.timeline_path.empty())
    progress << "sdpa-prof: no timeline is written to " << o.timeline_path << ": the profile is off ("
             << profiler_info.description << ")\n";
  report.environment.power = nvml ? PowerSource{true, nvml->description()} : PowerSource{false, nvml_why};
  progress << (nvml ? fmt::format("power: {}\n", nvml->description())
                    : fmt::format("power: off: {}; SM clocks are still measured, but not power, temperature "
                                  "or why the clock drops\n",
                                  nvml_why));
  report.environment.ceilings = cached_or_measured_ceilings(device, progress);
  const InterruptGuard interrupts;
  TimingOptions timing;
  timing.warmup = o.config.warmup;
  timing.hot = o.config.hot;
  timing.stopping = o.config.stopping;
  timing.stop_requested = [] { return InterruptGuard::signal_seen() != 0; };
  timing.nvml = nvml.get();

  // The cases so far, shared with the watchdog, which saves them if a case hangs.
  std::mutex cases_mutex;
  std::unique_ptr<CaseWatchdog> watchdog;
  if (o.case_timeout_s > 0)
    watchdog = std::make_unique<CaseWatchdog>(o.case_timeout_s, [&](const std::string& overran) {
      const std::lock_guard<std::mutex> lock(cases_mutex);
      report.partial = true;
      report.partial_reason = fmt::format("{} ran past --case-timeout {} s", overran, o.case_timeout_s);
      progress << "sdpa-prof: " << report.partial_reason << "; saving the " << report.cases.size()
               << " cases that finished\n";
      write_outputs(o, report, progress);
      std::_Exit(kExitGpuFailed);
    });

  std::size_t done = 0;
  HostStopwatch case_clock;  // the case's whole time: setup, verification, profile, timing
  const std::size_t problems = plan.problems.size();
  const std::size_t per_problem = plan.backends.size();
  const auto on_case = [&](const CaseResult& c) {
    // Variants are listed as they run: the count is of problems x choices.
    ++done;
    progress << fmt::format("[{}/{}] {} {} {}: {}{} ({:.2f} s){}\n", done, std::max(done, problems * per_problem),
                            c.backend, c.problem.shape_label(), dtype_name(c.problem.dtype), status_name(c.status),
                            c.timing ? fmt::format(" {:.3f} ms{}", c.timing->median_ms,
                                                   c.timing->interrupted
                                                       ? fmt::format(" (interrupted after {} samples)", c.timing->samples)
                                                       : "")
                                     : "",
                            case_clock.elapsed_us() / 1e6, setup_text(c.setup));
    case_clock = HostStopwatch{};
    const std::lock_guard<std::mutex> lock(cases_mutex);
    report.cases.push_back(c);
  };
  const auto on_start = [&](const std::string& backend, const Problem& p) {
    if (watchdog) watchdog->start_case(fmt::format("{} {} {}", backend, p.shape_label(), dtype_name(p.dtype)));
  };
  CaseRecordsCallback on_records;
  if (timeline) on_records = [&](const CaseResult&, ActivityRecords&& records) { timeline->add(std::move(records)); };
  SweepResult swept = run_sweep(plan, device, report.environment.seed, timing, {on_start, on_case, on_records},
                                {profiler.get(), counters.get()});
  watchdog.reset();
  if (o.with_torch && swept.stopped_because.empty()) add_torch_cases(o, plan, report, timeline.get(), progress);

  const int signal = InterruptGuard::signal_seen();
  if (!swept.stopped_because.empty()) {
    report.partial = true;
    report.partial_reason = signal != 0 ? fmt::format("interrupted by {}", signal == SIGINT    ? "SIGINT"
                                                                                    : signal == SIGTERM ? "SIGTERM"
                                                                                                        : "SIGHUP")
                                        : swept.stopped_because;
    progress << "sdpa-prof: stopped early: " << report.partial_reason << "; " << report.cases.size()
             << " cases finished\n";
  }
  out << format_table(report, o.table);
  if (o.kernels) out << format_kernels(report, o.table.style);
  out.flush();  // before a file written in place on the same stream (--json /dev/stdout)
  write_outputs(o, report, progress);
  if (timeline) timeline->write(o.timeline_path, device.name, progress);
  if (signal != 0) return 128 + signal;
  if (report.partial) return kExitGpuFailed;
  return report.any_failed() ? kExitCaseFailed : kExitOk;
}

int trace_command(const CliOptions& o, std::ostream& out, std::ostream& progress) {
  check_outputs({{"--json", o.json_path}, {"--csv", o.csv_path}, {"--md", o.md_path}, {"--timeline", o.timeline_path}}, {});
  TraceRequest request{o.trace_command, find_injection_library(), o.device, !o.timeline_path.empty()};
  TraceOutcome traced = run_traced(request);
  if (!traced.not_started.empty()) {
    progress << "sdpa-prof: trace: " << traced.not_started << "\n";
    return traced.exit_code;
  }
  if (!traced.refused.empty()) throw InputError(traced.refused);
  for (const std::string& note : traced.notes) progress << "sdpa-prof: note: " << note << "\n";

  RunReport report;
  report.environment = Environment{kToolVersion, kGitSha, o.command_line, host_name(), utc_now_iso8601(), 0, traced.device, {}, {}, {}, {}};
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
  }
  out << format_trace(*report.trace);
  out.flush();
  write_outputs(o, report, progress);
  if (!o.timeline_path.empty()) {
    TimelineRecorder timeline(static_cast<uint64_t>(o.timeline_max_mb) << 20);
    for (ProcessRecords& p : traced.records)
      timeline.add(std::move(p.records), static_cast<uint32_t>(p.pid), fmt::format("{} (pid {})", report.trace->command, p.pid));
    timeline.write(o.timeline_path, traced.device ? traced.device->name : "GPU", progress);
  }
  return traced.exit_code;
}

int ceilings_command(const CliOptions& o, std::ostream& out, std::ostream& progress) {
  DeviceInfo device;
  std::string error;
  if (!query_device(o.device, device, error)) {
    progress << "sdpa-prof: " << error << "\n";
    return kExitGpuFailed;
  }
  std::optional<Ceilings> c = o.remeasure ? std::nullopt : load_cached_ceilings(device);
  const bool cached = c.has_value();
  if (!c) {
    c = measure_ceilings(device);
    if (const std::string why = save_ceilings(device, *c); !why.empty()) progress << "sdpa-prof: warning: " << why << "\n";
  }
  out << fmt::format("{} ({})\n", c->device_name, c->device_uuid);
  out << fmt::format("  bf16 tensor-core GEMM  {:8.1f} TFLOP/s\n", c->bf16_gemm_tflops);
  out << fmt::format("  fp16 tensor-core GEMM  {:8.1f} TFLOP/s\n", c->fp16_gemm_tflops);
  out << fmt::format("  device-to-device copy  {:8.2f} TB/s (read + write)\n", c->copy_tb_per_s);
  out << fmt::format("{} {} at {}: {}\n", cached ? "cached, measured" : "measured", ceilings_cache_path(device),
                     c->measured_at, c->method);
  return kExitOk;
}

int compare_command(const CliOptions& o, std::ostream& out, std::ostream& err) {
  check_outputs({{"--md", o.md_path}, {"--json", o.json_path}, {"--html", o.html_path}}, o.files);
  const RunReport base = load_report(o.files.at(0));
  const RunReport next = load_report(o.files.at(1));
  const Comparison comparison = compare_reports(base, next, o.threshold, o.strict_clock);
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
  if (!o.md_path.empty()) write_file_atomically(o.md_path, format_comparison_markdown(comparison));
  if (!o.json_path.empty()) write_file_atomically(o.json_path, comparison_to_json(comparison).dump(2) + "\n");
  if (!o.html_path.empty()) write_file_atomically(o.html_path, format_comparison_html(comparison, base, next));
  return comparison.any_regression() ? kExitCaseFailed : kExitOk;
}

int report_command(const CliOptions& o, std::ostream& out, std::ostream& progress) {
  check_outputs({{"--html", o.html_path}}, o.files);
  const RunReport report = load_report(o.files.at(0));
  if (o.format == "md") {
    out << format_markdown(report);
  } else if (o.format == "csv") {
    out << format_csv(report);
  } else {
    out << format_table(report, o.table);
    if (o.kernels) out << format_kernels(report, o.table.style);
    if (report.trace) out << format_trace(*report.trace);
  }
  out.flush();
  if (!o.html_path.empty()) {
    write_file_atomically(o.html_path, format_html(report));
    progress << "wrote " << o.html_path << "\n";
  }
  return kExitOk;
}

int list_command(std::ostream& out) {
  out << fmt::format("{:<14} {:<6} {:<11} {:<10} {:<7} {}\n", "backend", "built", "dtypes", "head dims",
                     "archs", "what it is");
  for (const BackendEntry& e : backend_registry())
    out << fmt::format("{:<14} {:<6} {:<11} {:<10} {:<7} {}{}\n", e.name, e.built() ? "yes" : "no",
                       e.dtypes, e.head_dims, e.archs, e.summary,
                       e.built() ? "" : fmt::format(" [not built: {}]", e.not_built_reason));
  return kExitOk;
}

}  // namespace sdpa
