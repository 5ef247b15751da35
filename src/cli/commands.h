// The subcommands; each returns the process exit code.
#pragma once

#include <iosfwd>

#include "cli/cli.h"
#include "model/errors.h"

namespace sdpa {

int run_command(const CliOptions& options, std::ostream& out, std::ostream& progress);
int list_command(std::ostream& out);
int ceilings_command(const CliOptions& options, std::ostream& out, std::ostream& progress);
int compare_command(const CliOptions& options, std::ostream& out, std::ostream& err);
int report_command(const CliOptions& options, std::ostream& out, std::ostream& progress);
// Joins shards and resumed parts of one sweep into the files --json, --csv, --md, --html name;
// parts of different sweeps, or a case in two parts, are refused (2) with nothing written.
int merge_command(const CliOptions& options, std::ostream& out, std::ostream& progress);
// Returns the traced command's exit code (127 when it is not found); 2 when another profiler
// holds CUPTI in it.
int trace_command(const CliOptions& options, std::ostream& out, std::ostream& progress);

}  // namespace sdpa
