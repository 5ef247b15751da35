#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/crash_report.h"
#include "cli/interrupts.h"
#include "cli/terminal.h"
#include "model/errors.h"

namespace {

int run_subcommand(const sdpa::CliOptions& options) {
  using namespace sdpa;
  switch (options.command) {
    case Command::list:
      return list_command(std::cout);
    case Command::compare:
      return compare_command(options, std::cout, std::cerr);
    case Command::ceilings:
      return ceilings_command(options, std::cout, std::cerr);
    case Command::report:
      return report_command(options, std::cout, std::cerr);
    case Command::trace:
      return trace_command(options, std::cout, std::cerr);
    case Command::merge:
      return merge_command(options, std::cout, std::cerr);
    case Command::run:
      break;
  }
  return run_command(options, std::cout, std::cerr);
}

// What was printed must have arrived: a full disk or a closed stdout is an error, not exit 0.
int finish_stdout(int code) {
  std::cout.flush();
  if (std::cout && std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return code;
  const int err = errno;
  std::cerr << "sdpa-prof: error: cannot write the standard output: " << std::strerror(err != 0 ? err : EIO) << "\n";
  return sdpa::kExitBadInput;
}

}  // namespace

// Every error reaches here as one of the family (model/errors.h) and leaves as one sentence and
// its exit code; anything else is a bug, still reported as a sentence rather than a terminate.
int main(int argc, char** argv) {
  using namespace sdpa;
  remove_temporaries_on_signals();
  report_crashes();
  try {
    CliParse parsed = parse_cli(argc, argv);
    if (parsed.exit_code) return finish_stdout(*parsed.exit_code);
    CliOptions& options = parsed.options;
    options.table.style = text_style_for(terminal_facts(STDOUT_FILENO));
    return finish_stdout(run_subcommand(options));
  } catch (const InputError& e) {
    std::cerr << "sdpa-prof: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "sdpa-prof: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const ApiError& e) {
    std::cerr << "sdpa-prof: " << e.what() << "\n";
    return kExitGpuFailed;
  } catch (const std::exception& e) {
    std::cerr << "sdpa-prof: internal error: " << e.what() << "\n";
    return kExitGpuFailed;
  }
}
