// The files a command writes, as one list per command: the same list is checked before any work
// (writable, no two on one file, none over an input) and written at the end, or by the watchdog
// when a case hangs. run, trace, report and compare each build theirs from the functions below.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "compare/comparison.h"
#include "io/atomic_file.h"
#include "model/result.h"

namespace sdpa {

struct CliOptions;

struct OutputWriter {
  OutputPath output;  // the flag and its path; an empty path is not asked for and not written
  std::function<void(const std::string& path, std::ostream& progress)> write;
};

// --json, --samples, --csv, --md and --html of a run or a trace. The report is read when the files
// are written, not when the list is made, so the list can be made before the run.
std::vector<OutputWriter> report_writers(const CliOptions& o, const RunReport& report);
// --md, --json and --html of `compare`.
std::vector<OutputWriter> comparison_writers(const CliOptions& o, const Comparison& comparison,
                                             const RunReport& base, const RunReport& next);

// Throws InputError before any work when an output cannot be written or would clobber an input.
void check_writers(const std::vector<OutputWriter>& writers, const std::vector<std::string>& inputs);
// Writes every asked-for file, each whole or not at all, and says so on `progress`.
void write_all(const std::vector<OutputWriter>& writers, std::ostream& progress);

}  // namespace sdpa
