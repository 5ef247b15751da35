// `run --timeline FILE`: the records of every case's profile pass, kept within a bound, and
// written at the end as one timeline; `trace --timeline FILE`: those of each traced process.
#pragma once

#include <cstdint>
#include <list>
#include <ostream>
#include <string>
#include <utility>

#include "model/activity.h"

namespace sdpa {

class TimelineRecorder {
 public:
  TimelineRecorder(uint64_t max_bytes, std::string device_name)
      : max_bytes_(max_bytes), device_name_(std::move(device_name)) {}

  // Keeps a case's records while their count could still fit under the cap; later ones are counted.
  // Records of another process (trace) go on a track group of their own.
  void add(ActivityRecords&& records);
  void add(ActivityRecords&& records, uint32_t process_id, const std::string& process_name);
  // Writes the file atomically and says on `progress` what it holds (and, when capped, that it is).
  void write(const std::string& path, std::ostream& progress) const;

 private:
  uint64_t max_bytes_;
  std::string device_name_;
  struct Kept {
    uint32_t process_id = 0;
    std::string process_name;
    ActivityRecords records;
  };
  std::list<Kept> kept_;  // a list: the timeline points into it
  uint64_t kept_records_ = 0;
  uint64_t left_out_ = 0;
};

}  // namespace sdpa
