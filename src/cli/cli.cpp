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

Exit codes: 0 success, 1 a case failed verification, 2 bad input, 3 no usable GPU.
)";

// `run` is the default subcommand: anything that is not a known subcommand goes to it.
std::vector<std::string> with_default_subcommand(int argc, const char* const* argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool has_subcommand = !args.empty() && (args[0] == "run" || args[0] == "list" ||
                                                args[0] == "compare" || args[0] == "report" ||
                                                args[0] == "ceilings" || args[0] == "trace");
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

// --wide, --columns, --quiet and --kernels (run, report and trace) into the table's options.
void apply_table_flags(TableOptions& table, bool wide, const CLI::Option* columns_opt, const std::string& columns,
                       bool quiet, bool kernels) {
  if (wide && columns_opt->count() > 0)
    throw InputError("--wide and --columns cannot be used together: --wide shows every column, --columns picks them");
  if (wide) table.choice = ColumnChoice::wide;
  if (columns_opt->count() > 0) {
    table.choice = ColumnChoice::listed;
    table.columns = parse_columns(columns);
  }
  table.summary = !quiet;
  table.every_finding = kernels;
}

uint64_t parse_seed(const std::string& text) {
  const std::optional<uint64_t> v = decimal_unsigned(text);
  if (!v) throw InputError(fmt::format("--seed: expected an integer from 0 to 18446744073709551615, got {}", echo(text)));
  return *v;
}

}  // namespace

CliParse parse_cli(int argc, const char* const* argv, const std::vector<AxisSpec>& axes) {
  CLI::App app{"sdpa-prof: runs, verifies and profiles attention backends on the GPU", "sdpa-prof"};
  app.set_version_flag("--version", fmt::format("sdpa-prof {} (git {})", kToolVersion, kGitSha));
  app.require_subcommand(0, 1);

  CliParse result;
  CliOptions& o = result.options;
  CLI::App* run = app.add_subcommand("run", "run the sweep (the default subcommand)");
  CLI::App* list = app.add_subcommand("list", "list every backend, what it supports and whether it is built");
  CLI::App* compare = app.add_subcommand("compare", "compare two result files; exit 1 on a regression");
  CLI::App* report = app.add_subcommand("report", "print a saved result file (no GPU needed)");
  CLI::App* ceilings = app.add_subcommand("ceilings", "measure (once, then cached) the GPU's GEMM rate and copy bandwidth");
  CLI::App* trace = app.add_subcommand("trace", "run a command with CUPTI injected and profile it: sdpa-prof trace [options] -- CMD [ARGS...]");
  ceilings->add_flag("--remeasure", o.remeasure, "measure again instead of reading the cache");
  ceilings->add_option("--device", o.device, "CUDA device ordinal")->type_name("N");
  run->footer(kExamples);
  app.footer(kExamples);

  std::string config_path;
  std::vector<std::string> backends;
  std::string seed, warmup, min_samples, max_noise_percent, min_time, timeout;
  bool hot = false;
  std::vector<CLI::Option*> file_options;
  file_options.push_back(
      run->add_option("--config", config_path, "sweep preset (JSON); flags override its axes")->type_name("FILE"));
  CLI::Option* backend_opt =
      run->add_option("--backend", backends, "backends to run, comma-separated, or all; NAME:all runs every variant (cudnn:all)")
          ->type_name("LIST");
  // One option per axis of the axis table.
  struct AxisFlag {
    const AxisSpec* axis;
    std::vector<std::string> texts;
    bool on = false;
    CLI::Option* option = nullptr;
  };
  std::vector<AxisFlag> axis_flags;
  axis_flags.reserve(axes.size());
  for (const AxisSpec& axis : axes) {
    AxisFlag& f = axis_flags.emplace_back(AxisFlag{&axis, {}, false, nullptr});
    if (axis.type == AxisType::boolean)
      f.option = run->add_flag(axis.flag + ",!--no-" + axis.flag.substr(2), f.on, axis.help);
    else
      f.option = run->add_option(axis.flag, f.texts, axis.help)->type_name("LIST");
  }
  CLI::Option* seed_opt = run->add_option("--seed", seed, "random seed for the inputs (default: a fresh one)")->type_name("N");
  CLI::Option* warmup_opt = run->add_option("--warmup", warmup, "forwards before timing")->type_name("N");
  CLI::Option* min_samples_opt = run->add_option("--min-samples", min_samples, "timed forwards per case at least (default 10)")->type_name("N");
  CLI::Option* max_noise_opt = run->add_option("--max-noise", max_noise_percent,
      "sample until the median's relative spread is under this, in percent (default 0.5)")->type_name("PCT");
  CLI::Option* min_time_opt = run->add_option("--min-time", min_time, "seconds of sampling per case at least (default 0.5)")->type_name("S");
  CLI::Option* timeout_opt = run->add_option("--timeout", timeout,
      "seconds of sampling per case at most; then the result says it did not converge (default 15)")
      ->type_name("S");
  CLI::Option* hot_opt = run->add_flag("--hot", hot, "back-to-back samples with a warm L2 (default: L2 flushed before each)");
  file_options.push_back(run->add_option("--samples", o.samples_path, "write every timing sample of every case to this JSON file")->type_name("FILE"));
  std::string cudnn_engines;
  CLI::Option* cudnn_engines_opt =
      run->add_option("--cudnn-engines", cudnn_engines, "deprecated: use --backend cudnn:all")
          ->type_name("WHICH")
          ->check(CLI::IsMember({"all"}));
  file_options.push_back(run->add_option("--json", o.json_path, "write the results as JSON to this file")->type_name("FILE"));
  file_options.push_back(run->add_option("--csv", o.csv_path, "write the results as CSV to this file")->type_name("FILE"));
  file_options.push_back(run->add_option("--md", o.md_path, "write the results as a Markdown table to this file")->type_name("FILE"));
  run->add_flag("--dry-run", o.dry_run, "print the cases and the memory each needs, run nothing");
  run->add_flag("--kernels", o.kernels, "after the table, each case's kernels, copies and occupancy");
  file_options.push_back(run->add_option("--html", o.html_path, "also write the results as one self-contained HTML page")->type_name("FILE"));
  file_options.push_back(run->add_option(
      "--timeline", o.timeline_path, "write the profile passes as a Chrome trace-event JSON file (Perfetto, chrome://tracing)")
      ->type_name("FILE"));
  std::string timeline_max_mb;
  CLI::Option* timeline_max_mb_opt = run->add_option(
      "--timeline-max-mb", timeline_max_mb, "the timeline's size cap in MiB; past it later events are left out (default 256)")
      ->type_name("MB");
  // The table's look, for run and report alike.
  struct TableFlags {
    bool wide = false;
    bool quiet = false;
    std::string columns;
    CLI::Option* columns_opt = nullptr;
  };
  TableFlags run_table, report_table;
  const auto add_table_flags = [](CLI::App* sub, TableFlags& f) {
    sub->add_flag("--wide", f.wide, "every column of the table, whatever the terminal's width");
    f.columns_opt = sub->add_option("--columns", f.columns, "the table's columns, comma-separated, in the order given; one of " +
                                                                fmt::format("{}", fmt::join(table_column_ids(), ",")))
                        ->type_name("LIST");
    sub->add_flag("--quiet", f.quiet, "no summary under the table");
  };
  add_table_flags(run, run_table);
  bool no_profile = false;
  run->add_flag("--no-profile", no_profile, "skip the CUPTI profile pass (timing and host cost only)");
  bool counters = true;
  CLI::Option* counters_opt = run->add_flag(
      "--counters,!--no-counters", counters,
      "a hardware-counter pass per case with CUPTI's range profiler (default: on where the GPU permits; preset key "
      "\"counters\")");
  run->add_option("--device", o.device, "CUDA device ordinal")->type_name("N");
  std::string case_timeout;
  CLI::Option* case_timeout_opt = run->add_option(
      "--case-timeout", case_timeout, "seconds one case may take at most; past it the results so far are saved and the run ends (exit 3)")
      ->type_name("S");

  std::string threshold_percent;
  compare->add_option("files", o.files, "BASE.json NEW.json")->required()->expected(2)->type_name("FILE");
  CLI::Option* threshold_opt =
      compare->add_option("--threshold", threshold_percent, "smallest change that matters, in percent (default 5)")->type_name("PCT");
  file_options.push_back(
      compare->add_option("--md", o.md_path, "also write the comparison as Markdown (for a pull-request comment)")->type_name("FILE"));
  file_options.push_back(compare->add_option("--json", o.json_path, "also write the comparison as JSON")->type_name("FILE"));
  compare->add_flag("--strict-env", o.strict_env, "refuse results from different devices or library versions");
  compare->add_flag("--allow-empty", o.allow_empty, "accept two results with no case in common (exit 0)");
  compare->add_flag("--strict-clock", o.strict_clock,
                    "count a slowdown that the new run's lower SM clock explains as a regression");
  report->add_option("file", o.files, "a result file written by --json")->required()->expected(1)->type_name("FILE");
  report->add_option("--format", o.format, "table, md or csv")->type_name("FORMAT")->check(CLI::IsMember({"table", "md", "csv"}));
  report->add_flag("--kernels", o.kernels, "with the table, each case's kernels, copies and occupancy");
  file_options.push_back(report->add_option("--html", o.html_path, "also write the result as one self-contained HTML page")->type_name("FILE"));
  add_table_flags(report, report_table);
  file_options.push_back(compare->add_option("--html", o.html_path, "also write the comparison as one self-contained HTML page")->type_name("FILE"));
  file_options.push_back(trace->add_option("--json", o.json_path, "write the traced cases as JSON to this file")->type_name("FILE"));
  file_options.push_back(trace->add_option("--md", o.md_path, "write the traced cases as a Markdown table to this file")->type_name("FILE"));
  file_options.push_back(trace->add_option("--csv", o.csv_path, "write the traced cases as CSV to this file")->type_name("FILE"));
  file_options.push_back(trace->add_option("--timeline", o.timeline_path,
                                           "write the traced processes' records as a Chrome trace-event JSON file (Perfetto, chrome://tracing)")
                                           ->type_name("FILE"));
  std::string trace_timeline_max_mb;
  CLI::Option* trace_timeline_max_mb_opt = trace->add_option(
      "--timeline-max-mb", trace_timeline_max_mb, "the timeline's size cap in MiB; past it later events are left out (default 256)")
      ->type_name("MB");
  trace->add_flag("--kernels", o.kernels, "after the table, each case's kernels, copies and occupancy");
  trace->add_option("--device", o.device, "CUDA device whose limits the occupancy uses")->type_name("N");
  TableFlags trace_table;
  add_table_flags(trace, trace_table);
  run->add_flag("--with-torch", o.with_torch,
                "also run PyTorch's own paths (share/sdpa-prof/torch_sdpa.py under trace) on the same problems: rows torch:<backend>");

  std::vector<std::string> args = with_default_subcommand(argc, argv);
  // trace's command is everything after its "--", CMD's own flags included: CLI11 never sees it.
  if (!args.empty() && args[0] == "trace") {
    const auto dashes = std::find(args.begin(), args.end(), "--");
    if (dashes != args.end()) {
      o.trace_command.assign(dashes + 1, args.end());
      args.erase(dashes, args.end());
    }
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them in reverse
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    result.exit_code = code == 0 ? 0 : 2;
    return result;
  }

  o.command_line = command_line_text(std::vector<std::string>(argv, argv + argc));
  for (const CLI::Option* f : file_options)
    if (f->count() > 0 && f->as<std::string>().empty())
      throw InputError(fmt::format("{}: expected a file name, got ''", f->get_name()));
  o.profile = !no_profile;
  if (list->parsed()) {
    o.command = Command::list;
    return result;
  }
  if (ceilings->parsed()) {
    o.command = Command::ceilings;
    return result;
  }
  if (trace->parsed()) {
    o.command = Command::trace;
    if (o.trace_command.empty())
      throw InputError("trace: give the command to run after --: sdpa-prof trace [options] -- CMD [ARGS...]");
    apply_table_flags(o.table, trace_table.wide, trace_table.columns_opt, trace_table.columns, trace_table.quiet, o.kernels);
    if (trace_timeline_max_mb_opt->count() > 0) {
      if (o.timeline_path.empty()) throw InputError("--timeline-max-mb needs --timeline FILE");
      o.timeline_max_mb = integer_in("--timeline-max-mb", trace_timeline_max_mb, 1, int64_t{1} << 20);
    }
    return result;
  }
  if (compare->parsed() || report->parsed()) {
    o.command = compare->parsed() ? Command::compare : Command::report;
    if (report->parsed())
      apply_table_flags(o.table, report_table.wide, report_table.columns_opt, report_table.columns, report_table.quiet, o.kernels);
    if (threshold_opt->count() > 0) o.threshold = number_above("--threshold", threshold_percent, 0) / 100.0;
    return result;
  }
  apply_table_flags(o.table, run_table.wide, run_table.columns_opt, run_table.columns, run_table.quiet, o.kernels);
  o.config_path = config_path;
  try {
    o.config = config_path.empty() ? default_config() : load_config_file(config_path);
  } catch (const InputError& e) {
    throw InputError(fmt::format("--config: {}", e.what()));
  }
  SweepConfig& c = o.config;
  if (backend_opt->count() > 0) c.backends = split_lists("--backend", backends, "backends");
  if (cudnn_engines_opt->count() > 0) {
    c.backends = {"cudnn:all"};
    o.notes.push_back("--cudnn-engines all is deprecated and will be removed: use --backend cudnn:all");
  }
  for (const AxisFlag& f : axis_flags) {
    if (f.option->count() == 0) continue;
    std::vector<AxisValue>& values = c.axes[f.axis->name];
    values.clear();
    if (f.axis->type == AxisType::boolean) values.push_back(f.on);
    for (const std::string& text : split_lists(f.axis->flag, f.texts, "values"))
      values.push_back(parse_axis_text(*f.axis, text));
    // Axes that follow this one follow its new values unless they were given too.
    for (const AxisFlag& g : axis_flags)
      if (g.axis->follows == f.axis->name && g.option->count() == 0) c.axes.erase(g.axis->name);
  }
  if (seed_opt->count() > 0) c.seed = parse_seed(seed);
  if (warmup_opt->count() > 0) c.warmup = static_cast<int>(integer_in("--warmup", warmup, 0, 1000000));
  if (min_samples_opt->count() > 0)
    c.stopping.min_samples = static_cast<int>(integer_in("--min-samples", min_samples, 1, 100000));
  if (max_noise_opt->count() > 0) c.stopping.max_noise = number_above("--max-noise", max_noise_percent, 0) / 100.0;
  if (min_time_opt->count() > 0) c.stopping.min_time_s = number_above("--min-time", min_time, 0, true);
  if (timeout_opt->count() > 0) c.stopping.timeout_s = number_above("--timeout", timeout, 0, true);
  if (hot_opt->count() > 0) c.hot = hot;
  if (counters_opt->count() > 0) c.counters = counters;
  if (case_timeout_opt->count() > 0) o.case_timeout_s = number_above("--case-timeout", case_timeout, 0);
  if (timeline_max_mb_opt->count() > 0) {
    if (o.timeline_path.empty()) throw InputError("--timeline-max-mb needs --timeline FILE");
    o.timeline_max_mb = integer_in("--timeline-max-mb", timeline_max_mb, 1, int64_t{1} << 20);
  }
  if (!o.timeline_path.empty() && !o.profile)
    throw InputError("--timeline shows the profile pass, which --no-profile skips: drop one of them");
  return result;
}

}  // namespace sdpa
