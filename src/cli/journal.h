// The journal of a run with --json: after every case, the results so far are written to the
// --json file, marked partial, so that a SIGKILL, the OOM killer or a driver reset loses at most
// the case that was running, and `--resume FILE` can finish the sweep. Written between cases,
// never inside a timed sample.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "model/result.h"

namespace sdpa {

// A write rewrites every case so far (about 0.5 ms per profiled case on the build machine: 120 ms
// at 500 cases), so past `max_share` of the time since the last write it waits for more cases:
// the journal's cost stays bounded in long sweeps, and the cases a SIGKILL can lose are those of
// the last few seconds instead of the one running.
inline constexpr double kJournalMaxShare = 0.05;

class Journal {
 public:
  // No journal when `path` is empty or names something other than a regular file (/dev/stdout).
  explicit Journal(std::string path, double max_share = kJournalMaxShare);

  // After a case: writes `report` whole, marked partial with the count of cases so far, unless
  // the last write's cost is past its share of the time since.
  void write(RunReport& report);
  // "journal: 18 writes for 18 cases to out.json, 0.8 ms median, 1.2 ms at most, between cases";
  // empty if none.
  std::string summary() const;

 private:
  std::string path_;
  double max_share_;
  std::vector<double> write_ms_;
  std::size_t cases_ = 0;
  std::chrono::steady_clock::time_point last_write_end_{};
};

}  // namespace sdpa
