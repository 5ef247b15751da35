// The trace's record reader on any text, as `trace` reads a traced process's file
// (trace/trace_run.cpp: read_record_file), then the timeline over what was read, checked to be
// valid JSON. InputError is the answer to a file that is not one; a malformed or cut line ends
// the records there. Any other exception or a sanitizer report is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "io/record_file.h"
#include "model/errors.h"
#include "report/timeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/sdpa-fuzz-records-" + std::to_string(::getpid());
  {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  sdpa::RecordFile records;
  try {
    records = sdpa::read_record_file(path, 4096);
  } catch (const sdpa::InputError&) {
    return 0;
  }
  sdpa::TimelineProcess process{"fuzz", static_cast<uint32_t>(records.pid), "fuzz GPU", 0, {&records.records}};
  sdpa::TimelineOptions options;
  options.max_bytes = uint64_t{1} << 20;
  std::ostringstream out;
  sdpa::write_timeline(out, {process}, options);
  (void)nlohmann::json::parse(out.str());  // throws, a finding, if the document is not JSON
  return 0;
}
