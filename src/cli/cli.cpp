#include "cli/cli.h"

#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/preset.h"
#include "model/errors.h"
#include "model/number_text.h"
#include "cli/version.h"

namespace sdpa {
namespace {

constexpr const char* kExamples = R"(Examples:
  sdpa-prof --backend all --seq 4096            every built backend on the default preset at S=4096
  sdpa-prof --config configs/hf-a100.json --json out.json
  sdpa-prof --backend naive,math --seq 1024,4097 --dtype bf16,fp16 --no-causal
  sdpa-prof --dry-run --seq 16384               the cases and the memory each needs (no GPU)
  sdpa-prof list                                backends, what they support, whether built
  sdpa-prof compare base.json new.json          exit 1 when a case regressed (CI)
  sdpa-prof report out.json --format md         a saved run as a table, Markdown or CSV
  sdpa-prof report out.json --html out.html     a saved run as one page to share (no GPU)
  sdpa-prof ceilings                            the GPU's measured GEMM and copy ceilings
  sdpa-prof trace --kernels -- python3 share/sdpa-prof/torch_sdpa.py --seq 1024
                                                any CUDA program profiled from outside, exit code passed on
  sdpa-prof --backend all --seq 4096 --with-torch   PyTorch's own paths in the same table
  sdpa-prof --config configs/ci.json --shard 2/4 --json part-2.json
                                                one of four runners' part of the sweep
  sdpa-prof merge part-*.json --json all.json   the parts as one result
  sdpa-prof --config configs/ci.json --resume part-2.json   finish a run that was stopped

Exit codes: 0 success, 1 a case failed verification, 2 bad input, 3 no usable GPU.
)";

// `run` is the default subcommand: anything that is not a known subcommand goes to it.
std::vector<std::string> with_default_subcommand(int argc, const char* const* argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool has_subcommand = !args.empty() && (args[0] == "run" || args[0] == "list" ||
                                                args[0] == "compare" || args[0] == "report" ||
                                                args[0] == "ceilings" || args[0] == "trace" ||
                                                args[0] == "merge");
  const bool top_level_only = !args.empty() && args[0] == "--version";
  if (!has_subcommand && !top_level_only) args.insert(args.begin(), "run");
  return args;
}

// A comma-separated list: an empty item ("1024,,2048", "naive,") is a mistake, never skipped.
// An empty text is one empty item, for the caller to refuse by what the item should be.
std::vector<std::string> split_list(const std::string& flag, const std::string& text, const std::string& items) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (parts.size() > 1 && std::find(parts.begin(), parts.end(), "") != parts.end())
    throw InputError(fmt::format("{}: expected a comma-separated list of {} with no empty item, got {}", flag, items, echo(text)));
  return parts;
}

// Every item of every occurrence of a list flag (--seq 1,2 --seq 3).
std::vector<std::string> split_lists(const std::string& flag, const std::vector<std::string>& texts,
                                     const std::string& items) {
  std::vector<std::string> all;
  for (const std::string& text : texts)
    for (std::string& item : split_list(flag, text, items)) all.push_back(std::move(item));
  return all;
}

// --columns LIST: known column ids, comma-separated, in the order given.
std::vector<std::string> parse_columns(const std::string& text) {
  const std::vector<std::string> known = table_column_ids();
  std::string known_text;
  for (const std::string& id : known) known_text += (known_text.empty() ? "" : ", ") + id;
  const std::vector<std::string> ids = split_list("--columns", text, fmt::format("columns ({})", known_text));
  for (const std::string& id : ids)
    if (std::find(known.begin(), known.end(), id) == known.end())
      throw InputError(fmt::format("--columns: unknown column {}; the columns are {}", echo(id), known_text));
  return ids;
}

// An option kept as text while CLI11 parses, then checked and converted if it was given.
struct TextFlag {
  std::string text;
  CLI::Option* option = nullptr;
  bool given() const { return option->count() > 0; }
};

CLI::Option* add_text_option(CLI::App& sub, TextFlag& f, const std::string& name,
                             const std::string& help, const std::string& value_name) {
  f.option = sub.add_option(name, f.text, help)->type_name(value_name);
  return f.option;
}

// Every subcommand's FILE options, so that an empty name is refused once parsing is over.
using FileOptions = std::vector<CLI::Option*>;

void add_file_option(CLI::App& sub, FileOptions& files, const std::string& name, std::string& path,
                     const std::string& help) {
  files.push_back(sub.add_option(name, path, help)->type_name("FILE"));
}

void refuse_empty_file_names(const FileOptions& files) {
  for (const CLI::Option* f : files)
    if (f->count() > 0 && f->as<std::string>().empty())
      throw InputError(fmt::format("{}: expected a file name, got ''", f->get_name()));
}

// The table's look, for run, report and trace alike.
struct TableFlags {
  bool wide = false;
  bool quiet = false;
  std::string columns;
  CLI::Option* columns_opt = nullptr;
};

void add_table_options(CLI::App& sub, TableFlags& f) {
  sub.add_flag("--wide", f.wide, "every column of the table, whatever the terminal's width");
  f.columns_opt =
      sub.add_option("--columns", f.columns,
                     "the table's columns, comma-separated, in the order given; one of " +
                         fmt::format("{}", fmt::join(table_column_ids(), ",")))
          ->type_name("LIST");
  sub.add_flag("--quiet", f.quiet, "no summary under the table");
}

// --wide, --columns, --quiet and --kernels into the table's options.
void apply_table_flags(TableOptions& table, const TableFlags& f, bool kernels) {
  if (f.wide && f.columns_opt->count() > 0)
    throw InputError(
        "--wide and --columns cannot be used together: "
        "--wide shows every column, --columns picks them");
  if (f.wide) table.choice = ColumnChoice::wide;
  if (f.columns_opt->count() > 0) {
    table.choice = ColumnChoice::listed;
    table.columns = parse_columns(f.columns);
  }
  table.summary = !f.quiet;
  table.every_finding = kernels;
}

// --timeline-max-mb (run, trace), checked once --timeline is known.
void add_timeline_cap_option(CLI::App& sub, TextFlag& f) {
  add_text_option(sub, f, "--timeline-max-mb",
                  "the timeline's size cap in MiB; past it later events are left out (default 256)",
                  "MB");
}

void apply_timeline_cap(const TextFlag& f, CliOptions& o) {
  if (!f.given()) return;
  if (o.timeline_path.empty()) throw InputError("--timeline-max-mb needs --timeline FILE");
  o.timeline_max_mb = integer_in("--timeline-max-mb", f.text, 1, int64_t{1} << 20);
}

uint64_t parse_seed(const std::string& text) {
  const std::optional<uint64_t> v = decimal_unsigned(text);
  if (!v)
    throw InputError(fmt::format(
        "--seed: expected an integer from 0 to 18446744073709551615, got {}", echo(text)));
  return *v;
}

// One option per axis of the axis table.
struct AxisFlag {
  const AxisSpec* axis;
  std::vector<std::string> texts;
  bool on = false;
  CLI::Option* option = nullptr;
};

// What run's options hold until parsing is over, when they are checked against each other and
// laid over the preset.
struct RunFlags {
  std::string config_path;
  std::vector<std::string> backends;
  CLI::Option* backend_opt = nullptr;
  std::vector<AxisFlag> axes;
  TextFlag seed, warmup, min_samples, max_noise_percent, min_time, timeout;
  bool hot = false;
  CLI::Option* hot_opt = nullptr;
  TextFlag cudnn_engines;
  TextFlag timeline_max_mb;
  TableFlags table;
  bool no_profile = false;
  bool counters = true;
  CLI::Option* counters_opt = nullptr;
  TextFlag case_timeout;
  TextFlag shard;
  TextFlag devices;
  CLI::Option* device_opt = nullptr;
};

// --config, --backend, an option per axis, and how each case is sampled.
void add_sweep_options(CLI::App& run, RunFlags& f, FileOptions& files,
                       const std::vector<AxisSpec>& axes) {
  add_file_option(run, files, "--config", f.config_path,
                  "sweep preset (JSON); flags override its axes");
  f.backend_opt =
      run.add_option(
             "--backend", f.backends,
             "backends to run, comma-separated, or all; NAME:all runs every variant (cudnn:all)")
          ->type_name("LIST");
  f.axes.reserve(axes.size());  // the options keep pointers into its items
  for (const AxisSpec& axis : axes) {
    AxisFlag& a = f.axes.emplace_back(AxisFlag{&axis, {}, false, nullptr});
    if (axis.type == AxisType::boolean)
      a.option = run.add_flag(axis.flag + ",!--no-" + axis.flag.substr(2), a.on, axis.help);
    else
      a.option = run.add_option(axis.flag, a.texts, axis.help)->type_name("LIST");
  }
  add_text_option(run, f.seed, "--seed", "random seed for the inputs (default: a fresh one)", "N");
  add_text_option(run, f.warmup, "--warmup", "forwards before timing", "N");
  add_text_option(run, f.min_samples, "--min-samples",
                  "timed forwards per case at least (default 10)", "N");
  add_text_option(
      run, f.max_noise_percent, "--max-noise",
      "sample until the median's relative spread is under this, in percent (default 0.5)", "PCT");
  add_text_option(run, f.min_time, "--min-time",
                  "seconds of sampling per case at least (default 0.5)", "S");
  add_text_option(
      run, f.timeout, "--timeout",
      "seconds of sampling per case at most; then the result says it did not converge (default 15)",
      "S");
  f.hot_opt = run.add_flag("--hot", f.hot,
                           "back-to-back samples with a warm L2 (default: L2 flushed before each)");
}

void add_run_options(CLI::App& run, CliOptions& o, RunFlags& f, FileOptions& files,
                     const std::vector<AxisSpec>& axes) {
  add_sweep_options(run, f, files, axes);
  add_file_option(run, files, "--samples", o.samples_path,
                  "write every timing sample of every case to this JSON file");
  add_text_option(run, f.cudnn_engines, "--cudnn-engines", "deprecated: use --backend cudnn:all",
                  "WHICH")
      ->check(CLI::IsMember({"all"}));
  add_file_option(run, files, "--json", o.json_path, "write the results as JSON to this file");
  add_file_option(run, files, "--csv", o.csv_path, "write the results as CSV to this file");
  add_file_option(run, files, "--md", o.md_path,
                  "write the results as a Markdown table to this file");
  run.add_flag("--dry-run", o.dry_run, "print the cases and the memory each needs, run nothing");
  run.add_flag("--kernels", o.kernels,
               "after the table, each case's kernels, copies and occupancy");
  run.add_flag("--ops", o.ops, "after the table, each case's CPU ops per forward (a traced program's NVTX op ranges, as under torch.autograd.profiler.emit_nvtx); with --md the op tables follow, --csv holds op rows instead of cases");
  add_file_option(run, files, "--html", o.html_path,
                  "also write the results as one self-contained HTML page");
  add_file_option(
      run, files, "--timeline", o.timeline_path,
      "write the profile passes as a Chrome trace-event JSON file (Perfetto, chrome://tracing)");
  add_timeline_cap_option(run, f.timeline_max_mb);
  add_table_options(run, f.table);
  run.add_flag("--no-profile", f.no_profile,
               "skip the CUPTI profile pass (timing and host cost only)");
  f.counters_opt = run.add_flag("--counters,!--no-counters", f.counters,
                                "a hardware-counter pass per case with CUPTI's range profiler "
                                "(default: on where the GPU permits; preset key \"counters\")");
  f.device_opt = run.add_option("--device", o.device, "CUDA device ordinal")->type_name("N");
  add_text_option(run, f.devices, "--devices",
                  "run the sweep over these GPUs at once, one worker process each, its cases dealt "
                  "by predicted cost, the results as one; all for every visible GPU",
                  "LIST");
  add_text_option(run, f.case_timeout, "--case-timeout",
                  "seconds one case may take at most; past it the results so far are saved and the "
                  "run ends (exit 3)",
                  "S");
  add_file_option(run, files, "--resume", o.resume_path,
                  "continue the sweep of this result file: keep its finished cases, run the rest, "
                  "write the whole to it (or to --json)");
  add_text_option(run, f.shard, "--shard",
                  "run part K of N of the sweep's cases, balanced by predicted cost (sdpa-prof "
                  "merge joins the parts)",
                  "K/N");
  run.add_flag("--with-torch", o.with_torch,
               "also run PyTorch's own paths (share/sdpa-prof/torch_sdpa.py under trace) on the same "
               "problems: rows torch:<backend>");
  run.footer(kExamples);
}

// The axes given on the command line replace the preset's values.
void apply_axis_flags(const std::vector<AxisFlag>& flags, SweepConfig& c) {
  for (const AxisFlag& f : flags) {
    if (f.option->count() == 0) continue;
    std::vector<AxisValue>& values = c.axes[f.axis->name];
    values.clear();
    if (f.axis->type == AxisType::boolean) values.push_back(f.on);
    for (const std::string& text : split_lists(f.axis->flag, f.texts, "values"))
      values.push_back(parse_axis_text(*f.axis, text));
    // Axes that follow this one follow its new values unless they were given too.
    for (const AxisFlag& g : flags)
      if (g.axis->follows == f.axis->name && g.option->count() == 0) c.axes.erase(g.axis->name);
  }
}

// The seed, the warm-up, when sampling stops, the L2's state and the counter pass.
void apply_measurement_flags(const RunFlags& f, SweepConfig& c) {
  if (f.seed.given()) c.seed = parse_seed(f.seed.text);
  if (f.warmup.given())
    c.warmup = static_cast<int>(integer_in("--warmup", f.warmup.text, 0, 1000000));
  if (f.min_samples.given())
    c.stopping.min_samples =
        static_cast<int>(integer_in("--min-samples", f.min_samples.text, 1, 100000));
  if (f.max_noise_percent.given())
    c.stopping.max_noise = number_above("--max-noise", f.max_noise_percent.text, 0) / 100.0;
  if (f.min_time.given())
    c.stopping.min_time_s = number_above("--min-time", f.min_time.text, 0, true);
  if (f.timeout.given()) c.stopping.timeout_s = number_above("--timeout", f.timeout.text, 0, true);
  if (f.hot_opt->count() > 0) c.hot = f.hot;
  if (f.counters_opt->count() > 0) c.counters = f.counters;
}

// --shard K/N: 1 <= K <= N <= kMaxShards.
Shard parse_shard(const std::string& text) {
  const std::size_t slash = text.find('/');
  const std::string why = fmt::format("--shard: expected K/N with 1 <= K <= N <= {}, got {}", kMaxShards, echo(text));
  if (slash == std::string::npos) throw InputError(why);
  const std::optional<uint64_t> k = decimal_unsigned(text.substr(0, slash));
  const std::optional<uint64_t> n = decimal_unsigned(text.substr(slash + 1));
  if (!k || !n || *k < 1 || *k > *n || *n > static_cast<uint64_t>(kMaxShards)) throw InputError(why);
  return Shard{static_cast<int>(*k), static_cast<int>(*n)};
}

// --devices LIST|all, and what it cannot be combined with yet.
void apply_devices_flag(const RunFlags& f, CliOptions& o) {
  if (!f.devices.given()) return;
  if (f.devices.text == "all") {
    o.all_devices = true;
  } else {
    for (const std::string& item : split_list("--devices", f.devices.text, "GPU ordinals"))
      o.devices.push_back(static_cast<int>(integer_in("--devices", item, 0, 1023)));
  }
  const auto refuse = [](bool given, const std::string& what) {
    if (given) throw InputError(fmt::format("--devices {}", what));
  };
  refuse(f.device_opt->count() > 0, "picks the GPUs: drop --device");
  refuse(o.shard.has_value(), "deals the cases itself: --shard and --devices do not go together");
  refuse(!o.resume_path.empty(), "cannot resume yet: resume each device's part, or run without --devices");
  refuse(o.with_torch, "runs our backends only: PyTorch's rows belong on one GPU with ours (drop --with-torch)");
  refuse(!o.timeline_path.empty(), "writes no timeline: one per GPU is not supported yet (drop --timeline)");
  refuse(!o.samples_path.empty(), "writes no --samples file yet");
  refuse(o.dry_run, "with --dry-run: the dry run lists the whole sweep, on no GPU");
}

void apply_run_flags(const RunFlags& f, CliOptions& o) {
  o.profile = !f.no_profile;
  apply_table_flags(o.table, f.table, o.kernels);
  o.config_path = f.config_path;
  try {
    o.config = f.config_path.empty() ? default_config() : load_config_file(f.config_path);
  } catch (const InputError& e) {
    throw InputError(fmt::format("--config: {}", e.what()));
  }
  if (f.backend_opt->count() > 0)
    o.config.backends = split_lists("--backend", f.backends, "backends");
  if (f.cudnn_engines.given()) {
    o.config.backends = {"cudnn:all"};
    o.notes.push_back(
        "--cudnn-engines all is deprecated and will be removed: use --backend cudnn:all");
  }
  apply_axis_flags(f.axes, o.config);
  apply_measurement_flags(f, o.config);
  if (f.case_timeout.given())
    o.case_timeout_s = number_above("--case-timeout", f.case_timeout.text, 0);
  apply_timeline_cap(f.timeline_max_mb, o);
  if (f.shard.given()) o.shard = parse_shard(f.shard.text);
  if (!o.resume_path.empty() && o.json_path.empty()) o.json_path = o.resume_path;
  if (!o.resume_path.empty() && o.dry_run)
    throw InputError("--dry-run runs nothing, so it resumes nothing: drop --resume");
  apply_devices_flag(f, o);
  if (!o.timeline_path.empty() && !o.profile)
    throw InputError(
        "--timeline shows the profile pass, which --no-profile skips: drop one of them");
}

void add_compare_options(CLI::App& compare, CliOptions& o, TextFlag& threshold,
                         FileOptions& files) {
  compare.add_option("files", o.files, "BASE.json NEW.json")
      ->required()
      ->expected(2)
      ->type_name("FILE");
  add_text_option(compare, threshold, "--threshold",
                  "smallest change that matters, in percent (default 5)", "PCT");
  add_file_option(compare, files, "--md", o.md_path,
                  "also write the comparison as Markdown (for a pull-request comment)");
  add_file_option(compare, files, "--json", o.json_path, "also write the comparison as JSON");
  compare.add_flag("--strict-env", o.strict_env,
                   "refuse results from different devices or library versions");
  compare.add_flag("--allow-empty", o.allow_empty,
                   "accept two results with no case in common (exit 0)");
  compare.add_flag("--strict-clock", o.strict_clock,
                   "count a slowdown that the new run's lower SM clock explains as a regression");
  add_file_option(compare, files, "--html", o.html_path,
                  "also write the comparison as one self-contained HTML page");
}

void add_report_options(CLI::App& report, CliOptions& o, TableFlags& table, FileOptions& files) {
  report.add_option("file", o.files, "a result file written by --json")
      ->required()
      ->expected(1)
      ->type_name("FILE");
  report.add_option("--format", o.format, "table, md or csv")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"table", "md", "csv"}));
  report.add_flag("--kernels", o.kernels,
                  "with the table, each case's kernels, copies and occupancy");
  report.add_flag("--ops", o.ops, "with the table, each case's CPU ops per forward (a traced program's NVTX op ranges, as under torch.autograd.profiler.emit_nvtx); with --format md the op tables follow, --format csv holds op rows instead of cases");
  add_file_option(report, files, "--html", o.html_path,
                  "also write the result as one self-contained HTML page");
  add_table_options(report, table);
}

void add_merge_options(CLI::App& merge, CliOptions& o, FileOptions& files) {
  merge.add_option("files", o.files, "result files of one sweep: shards (--shard) and resumed parts")
      ->required()
      ->expected(1, 100000)
      ->type_name("FILE");
  add_file_option(merge, files, "--json", o.json_path, "write the merged result as JSON to this file");
  add_file_option(merge, files, "--csv", o.csv_path, "write the merged result as CSV to this file");
  add_file_option(merge, files, "--md", o.md_path, "write the merged result as a Markdown table to this file");
  add_file_option(merge, files, "--html", o.html_path, "write the merged result as one self-contained HTML page");
}

void add_ceilings_options(CLI::App& ceilings, CliOptions& o) {
  ceilings.add_flag("--remeasure", o.remeasure, "measure again instead of reading the cache");
  ceilings.add_option("--device", o.device, "CUDA device ordinal")->type_name("N");
}

struct TraceFlags {
  TextFlag timeline_max_mb;
  TableFlags table;
};

void add_trace_options(CLI::App& trace, CliOptions& o, TraceFlags& f, FileOptions& files) {
  add_file_option(trace, files, "--json", o.json_path,
                  "write the traced cases as JSON to this file");
  add_file_option(trace, files, "--md", o.md_path,
                  "write the traced cases as a Markdown table to this file");
  add_file_option(trace, files, "--csv", o.csv_path, "write the traced cases as CSV to this file");
  add_file_option(trace, files, "--timeline", o.timeline_path,
                  "write the traced processes' records as a Chrome trace-event JSON file "
                  "(Perfetto, chrome://tracing)");
  add_timeline_cap_option(trace, f.timeline_max_mb);
  trace.add_flag("--kernels", o.kernels,
                 "after the table, each case's kernels, copies and occupancy");
  trace.add_flag("--ops", o.ops, "after the table, each case's CPU ops per forward (a traced program's NVTX op ranges, as under torch.autograd.profiler.emit_nvtx); with --md the op tables follow, --csv holds op rows instead of cases");
  trace.add_option("--device", o.device, "CUDA device whose limits the occupancy uses")
      ->type_name("N");
  add_table_options(trace, f.table);
}

// trace's command is everything after its "--", CMD's own flags included: CLI11 never sees it.
void take_trace_command(std::vector<std::string>& args, std::vector<std::string>& command) {
  if (args.empty() || args[0] != "trace") return;
  const auto dashes = std::find(args.begin(), args.end(), "--");
  if (dashes == args.end()) return;
  command.assign(dashes + 1, args.end());
  args.erase(dashes, args.end());
}

void apply_trace_flags(const TraceFlags& f, CliOptions& o) {
  if (o.trace_command.empty())
    throw InputError(
        "trace: give the command to run after --: sdpa-prof trace [options] -- CMD [ARGS...]");
  apply_table_flags(o.table, f.table, o.kernels);
  apply_timeline_cap(f.timeline_max_mb, o);
}

}  // namespace

CliParse parse_cli(int argc, const char* const* argv, const std::vector<AxisSpec>& axes) {
  CLI::App app{"sdpa-prof: runs, verifies and profiles attention backends on the GPU", "sdpa-prof"};
  app.set_version_flag("--version", fmt::format("sdpa-prof {} (git {})", kToolVersion, kGitSha));
  app.require_subcommand(0, 1);
  CLI::App* run = app.add_subcommand("run", "run the sweep (the default subcommand)");
  CLI::App* list =
      app.add_subcommand("list", "list every backend, what it supports and whether it is built");
  CLI::App* compare =
      app.add_subcommand("compare", "compare two result files; exit 1 on a regression");
  CLI::App* report = app.add_subcommand("report", "print a saved result file (no GPU needed)");
  CLI::App* ceilings = app.add_subcommand(
      "ceilings", "measure (once, then cached) the GPU's GEMM rate and copy bandwidth");
  CLI::App* trace = app.add_subcommand("trace",
                                       "run a command with CUPTI injected and profile it: "
                                       "sdpa-prof trace [options] -- CMD [ARGS...]");
  CLI::App* merge = app.add_subcommand(
      "merge", "join shards and resumed parts of one sweep into one result: merge A.json B.json --json ALL.json");
  app.footer(kExamples);  // after the subcommands, which would inherit it

  CliParse result;
  CliOptions& o = result.options;
  // CLI11 writes into these while it parses; they are read once it is done.
  FileOptions files;
  RunFlags run_flags;
  TextFlag threshold;
  TableFlags report_table;
  TraceFlags trace_flags;
  add_run_options(*run, o, run_flags, files, axes);
  add_compare_options(*compare, o, threshold, files);
  add_report_options(*report, o, report_table, files);
  add_ceilings_options(*ceilings, o);
  add_trace_options(*trace, o, trace_flags, files);
  add_merge_options(*merge, o, files);

  std::vector<std::string> args = with_default_subcommand(argc, argv);
  take_trace_command(args, o.trace_command);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them in reverse
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    result.exit_code = code == 0 ? 0 : 2;
    return result;
  }

  o.command_line = command_line_text(std::vector<std::string>(argv, argv + argc));
  o.arguments.assign(argv + 1, argv + argc);
  refuse_empty_file_names(files);
  if (list->parsed()) {
    o.command = Command::list;
  } else if (ceilings->parsed()) {
    o.command = Command::ceilings;
  } else if (trace->parsed()) {
    o.command = Command::trace;
    apply_trace_flags(trace_flags, o);
  } else if (compare->parsed()) {
    o.command = Command::compare;
    if (threshold.given()) o.threshold = number_above("--threshold", threshold.text, 0) / 100.0;
  } else if (merge->parsed()) {
    o.command = Command::merge;
  } else if (report->parsed()) {
    o.command = Command::report;
    apply_table_flags(o.table, report_table, o.kernels);
  } else {
    apply_run_flags(run_flags, o);
  }
  return result;
}

}  // namespace sdpa
