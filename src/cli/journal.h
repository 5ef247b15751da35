// The journal of a run with --json: after every case, the results so far are written to the
// --json file, marked partial, so that a SIGKILL, the OOM killer or a driver reset loses at most
// the case that was running, and `--resume FILE` can finish the sweep. Written between cases,
// never inside a timed sample.
#pragma once

#include <string>
#include <vector>

#include "model/result.h"

namespace sdpa {

class Journal {
 public:
  // No journal when `path` is empty or names something other than a regular file (/dev/stdout).
  explicit Journal(std::string path);

  // Writes `report` whole, marked partial with the count of cases so far.
  void write(RunReport& report);
  // "journal: 18 writes to out.json, 0.8 ms median, 1.2 ms at most, between cases"; empty if none.
  std::string summary() const;

 private:
  std::string path_;
  std::vector<double> write_ms_;
};

}  // namespace sdpa
