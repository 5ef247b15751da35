// The subcommands; each returns the process exit code.
#pragma once

#include <iosfwd>

#include "cli.h"

namespace sdpa {

enum ExitCode : int { kExitOk = 0, kExitCaseFailed = 1, kExitBadInput = 2, kExitNoGpu = 3 };

int run_command(const CliOptions& options, std::ostream& out, std::ostream& progress);
int list_command(std::ostream& out);
int ceilings_command(const CliOptions& options, std::ostream& out, std::ostream& progress);
int compare_command(const CliOptions& options, std::ostream& out, std::ostream& err);
int report_command(const CliOptions& options, std::ostream& out);

}  // namespace sdpa
