#include "cli/journal.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "profile/host_cost.h"
#include "report/report.h"

namespace sdpa {

Journal::Journal(std::string path, double max_share) : max_share_(max_share) {
  if (!path.empty() && !written_in_place(path)) path_ = std::move(path);
}

void Journal::write(RunReport& report) {
  if (path_.empty()) return;
  ++cases_;
  const auto now = std::chrono::steady_clock::now();
  const double since_ms = std::chrono::duration<double, std::milli>(now - last_write_end_).count();
  if (!write_ms_.empty() && write_ms_.back() > max_share_ * since_ms) return;
  const HostStopwatch clock;
  const bool partial = std::exchange(report.partial, true);
  std::string reason = std::exchange(
      report.partial_reason,
      fmt::format("the sweep was still running after {} cases (the journal)", report.cases.size()));
  const std::string text = report_to_json(report).dump(2) + "\n";
  report.partial = partial;
  report.partial_reason = std::move(reason);
  write_file_atomically(path_, text);
  write_ms_.push_back(clock.elapsed_us() / 1e3);
  last_write_end_ = std::chrono::steady_clock::now();
}

std::string Journal::summary() const {
  if (write_ms_.empty()) return "";
  std::vector<double> sorted = write_ms_;
  std::sort(sorted.begin(), sorted.end());
  return fmt::format("journal: {} writes for {} cases to {}, {:.1f} ms median, {:.1f} ms at most, between cases",
                     sorted.size(), cases_, path_, sorted[sorted.size() / 2], sorted.back());
}

}  // namespace sdpa
