// Command-line parsing: `sdpa-prof [run] [options]`, `list`, `compare`, `report`, `ceilings`,
// `trace [options] -- CMD [ARGS...]`;
// the run options of each sweep axis come from the axis table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/sweep.h"
#include "report/report.h"

namespace sdpa {

enum class Command { run, list, compare, report, ceilings, trace, merge };

struct CliOptions {
  Command command = Command::run;
  SweepConfig config;
  std::string config_path;  // --config FILE, empty for the built-in preset
  bool dry_run = false;
  bool profile = true;   // the CUPTI profile pass of each case
  bool kernels = false;  // print each case's per-kernel breakdown
  bool ops = false;      // print each case's CPU ops; Markdown and CSV outputs hold them too
  std::string json_path;
  std::string samples_path;  // --samples FILE
  bool remeasure = false;    // ceilings --remeasure
  std::vector<std::string> notes;  // said on stderr before running (deprecated flags)
  int device = 0;
  double case_timeout_s = 0;  // --case-timeout: 0 for none
  std::string resume_path;    // run --resume FILE: keep FILE's finished cases, run the rest
  std::optional<Shard> shard;  // run --shard K/N: only this part of the sweep's cases
  // run --devices: one worker process per GPU listed (empty with all_devices: every visible one)
  std::vector<int> devices;
  bool all_devices = false;
  std::vector<std::string> arguments;  // as given, without the program's name: the workers' base
  std::string command_line;
  // compare and report
  std::vector<std::string> files;  // compare: BASE NEW; report: FILE
  double threshold = 0.05;         // smallest relative change that matters
  std::string md_path;   // run, compare: Markdown output
  std::string csv_path;  // run: CSV output
  bool strict_env = false;
  bool allow_empty = false;  // compare: two files with no case in common is not an error
  bool strict_clock = false;  // compare: a slowdown the lower SM clock explains is a regression anyway
  std::string format = "table";    // report: table, md or csv
  // The table (run, report): which columns, whether the summary follows, and the terminal it is
  // for (main fills `table.style` from the terminal in front of stdout).
  TableOptions table;
  std::string html_path;  // run, report, compare: one self-contained HTML page
  // trace: the command after "--", run with our injection library
  std::vector<std::string> trace_command;
  bool with_torch = false;        // run: PyTorch's own paths on the same problems, under trace
  std::string timeline_path;      // run, trace: the recorded activity as Chrome trace-event JSON
  int64_t timeline_max_mb = 256;  // --timeline-max-mb: the timeline's size cap
};

struct CliParse {
  std::optional<int> exit_code;  // set when parsing ended the program (help, version, bad flags)
  CliOptions options;
};

// Bad flag values throw InputError; help and version print and set exit_code.
CliParse parse_cli(int argc, const char* const* argv, const std::vector<AxisSpec>& axes = axis_table());

}  // namespace sdpa
