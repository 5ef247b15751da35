#include "cli.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "config.h"
#include "version.h"

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
  sdpa-prof ceilings                            the GPU's measured GEMM and copy ceilings

Exit codes: 0 success, 1 a case failed verification, 2 bad input, 3 no usable GPU.
)";

std::string join_command_line(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.find_first_of(" \t\"'") != std::string::npos) arg = "'" + arg + "'";
    line += (i == 0 ? "" : " ") + arg;
  }
  return line;
}

// `run` is the default subcommand: anything that is not a known subcommand goes to it.
std::vector<std::string> with_default_subcommand(int argc, const char* const* argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  const bool has_subcommand = !args.empty() && (args[0] == "run" || args[0] == "list" ||
                                                args[0] == "compare" || args[0] == "report" ||
                                                args[0] == "ceilings");
  const bool top_level_only = !args.empty() && args[0] == "--version";
  if (!has_subcommand && !top_level_only) args.insert(args.begin(), "run");
  return args;
}

}  // namespace

CliParse parse_cli(int argc, const char* const* argv) {
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
  ceilings->add_flag("--remeasure", o.remeasure, "measure again instead of reading the cache");
  ceilings->add_option("--device", o.device, "CUDA device ordinal");
  run->footer(kExamples);
  app.footer(kExamples);

  std::string config_path;
  std::vector<std::string> backends;
  std::vector<int64_t> seq, seq_kv, batch, heads, kv_heads, head_dim;
  std::vector<std::string> dtypes;
  bool causal = true;
  uint64_t seed = 0;
  int warmup = 0;
  int min_samples = 0;
  double max_noise_percent = 0;
  double min_time = 0;
  double timeout = 0;
  bool hot = false;
  run->add_option("--config", config_path, "sweep preset (JSON); flags override its axes")->check(CLI::ExistingFile);
  run->add_option("--backend", backends, "backends to run, comma-separated, or all")->delimiter(',');
  run->add_option("--seq", seq, "query sequence lengths")->delimiter(',');
  run->add_option("--seq-kv", seq_kv, "key/value sequence lengths (default: the same as --seq)")->delimiter(',');
  run->add_option("--dtype", dtypes, "bf16, fp16")->delimiter(',');
  run->add_option("--batch", batch, "batch sizes")->delimiter(',');
  run->add_option("--heads", heads, "query heads")->delimiter(',');
  run->add_option("--kv-heads", kv_heads, "key/value heads, dividing --heads (default: --heads)")->delimiter(',');
  run->add_option("--head-dim", head_dim, "head dimensions")->delimiter(',');
  CLI::Option* causal_flag = run->add_flag("--causal,!--no-causal", causal, "causal mask (top-left aligned) or none");
  CLI::Option* seed_opt = run->add_option("--seed", seed, "random seed for the inputs (default: a fresh one)");
  CLI::Option* warmup_opt = run->add_option("--warmup", warmup, "forwards before timing");
  CLI::Option* min_samples_opt = run->add_option("--min-samples", min_samples, "timed forwards per case at least (default 10)");
  CLI::Option* max_noise_opt = run->add_option("--max-noise", max_noise_percent,
      "sample until the median's relative spread is under this, in percent (default 0.5)");
  CLI::Option* min_time_opt = run->add_option("--min-time", min_time, "seconds of sampling per case at least (default 0.5)");
  CLI::Option* timeout_opt = run->add_option("--timeout", timeout,
      "seconds of sampling per case at most; then the result says it did not converge (default 15)");
  CLI::Option* hot_opt = run->add_flag("--hot", hot, "back-to-back samples with a warm L2 (default: L2 flushed before each)");
  run->add_option("--samples", o.samples_path, "write every timing sample of every case to this JSON file");
  run->add_option("--cudnn-engines", o.cudnn_engines,
                  "all: instead of the sweep, verify and time every cuDNN engine config for each problem")
      ->check(CLI::IsMember({"all"}));
  run->add_option("--json", o.json_path, "write the results as JSON to this file");
  run->add_option("--csv", o.csv_path, "write the results as CSV to this file");
  run->add_option("--md", o.md_path, "write the results as a Markdown table to this file");
  run->add_flag("--dry-run", o.dry_run, "print the cases and the memory each needs, run nothing");
  run->add_flag("--kernels", o.kernels, "after the table, each case's kernels, copies and occupancy");
  bool no_profile = false;
  run->add_flag("--no-profile", no_profile, "skip the CUPTI profile pass (timing and host cost only)");
  run->add_option("--device", o.device, "CUDA device ordinal");

  double threshold_percent = 5.0;
  compare->add_option("files", o.files, "BASE.json NEW.json")->required()->expected(2);
  compare->add_option("--threshold", threshold_percent, "smallest change that matters, in percent (default 5)")
      ->check(CLI::PositiveNumber);
  compare->add_option("--md", o.md_path, "also write the comparison as Markdown (for a pull-request comment)");
  compare->add_option("--json", o.json_path, "also write the comparison as JSON");
  compare->add_flag("--strict-env", o.strict_env, "refuse results from different devices or library versions");
  report->add_option("file", o.files, "a result file written by --json")->required()->expected(1);
  report->add_option("--format", o.format, "table, md or csv")->check(CLI::IsMember({"table", "md", "csv"}));
  report->add_flag("--kernels", o.kernels, "with the table, each case's kernels, copies and occupancy");

  const std::vector<std::string> args = with_default_subcommand(argc, argv);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them in reverse
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    result.exit_code = code == 0 ? 0 : 2;
    return result;
  }

  o.command_line = join_command_line(argc, argv);
  o.profile = !no_profile;
  if (list->parsed()) {
    o.command = Command::list;
    return result;
  }
  if (ceilings->parsed()) {
    o.command = Command::ceilings;
    return result;
  }
  if (compare->parsed() || report->parsed()) {
    o.command = compare->parsed() ? Command::compare : Command::report;
    o.threshold = threshold_percent / 100.0;
    return result;
  }
  o.config = config_path.empty() ? default_config() : load_config_file(config_path);
  SweepConfig& c = o.config;
  if (!backends.empty()) c.backends = backends;
  if (!seq.empty()) c.seq = seq;
  if (!seq_kv.empty()) c.seq_kv = seq_kv;
  if (!batch.empty()) c.batch = batch;
  if (!heads.empty()) {
    c.heads = heads;
    if (kv_heads.empty()) c.kv_heads.clear();  // kv heads follow the new head count
  }
  if (!kv_heads.empty()) c.kv_heads = kv_heads;
  if (!head_dim.empty()) c.head_dim = head_dim;
  if (!dtypes.empty()) {
    c.dtypes.clear();
    for (const std::string& name : dtypes) {
      DType t{};
      if (!parse_dtype(name, t)) throw InputError(fmt::format("unknown dtype \"{}\" (known: bf16, fp16)", name));
      c.dtypes.push_back(t);
    }
  }
  if (causal_flag->count() > 0) c.causal = {causal};
  if (seed_opt->count() > 0) c.seed = seed;
  if (warmup_opt->count() > 0) c.warmup = warmup;
  if (min_samples_opt->count() > 0) c.stopping.min_samples = min_samples;
  if (max_noise_opt->count() > 0) c.stopping.max_noise = max_noise_percent / 100.0;
  if (min_time_opt->count() > 0) c.stopping.min_time_s = min_time;
  if (timeout_opt->count() > 0) c.stopping.timeout_s = timeout;
  if (hot_opt->count() > 0) c.hot = hot;
  return result;
}

}  // namespace sdpa
