// Command-line parsing: `sdpa-prof [run] [options]` and `sdpa-prof list`.
#pragma once

#include <optional>
#include <string>

#include "sweep.h"

namespace sdpa {

enum class Command { run, list };

struct CliOptions {
  Command command = Command::run;
  SweepConfig config;
  bool dry_run = false;
  std::string json_path;
  int device = 0;
  std::string command_line;
};

struct CliParse {
  std::optional<int> exit_code;  // set when parsing ended the program (help, version, bad flags)
  CliOptions options;
};

// Bad flag values throw InputError; help and version print and set exit_code.
CliParse parse_cli(int argc, const char* const* argv);

}  // namespace sdpa
