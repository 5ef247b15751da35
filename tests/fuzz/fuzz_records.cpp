// The trace's record reader on any text, as `trace` reads a traced process's file
// (trace/trace_run.cpp: read_record_file), then the timeline over what was read, checked to be
// valid JSON, and the op table over its NVTX ranges (every top-level range taken for a forward). InputError is the answer to a file that is not one; a malformed or cut line ends
// the records there. Any other exception or a sanitizer report is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/record_file.h"
#include "model/errors.h"
#include "model/nvtx_ranges.h"
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
  const sdpa::RangeTree tree = sdpa::range_tree(records.records);
  std::vector<std::size_t> tops;
  for (std::size_t i = 0; i < tree.ranges.size(); ++i)
    if (tree.ranges[i].parent < 0) tops.push_back(i);
  (void)sdpa::op_table(records.records, tree, tops);
  sdpa::TimelineProcess process{"fuzz", static_cast<uint32_t>(records.pid), "fuzz GPU", 0, {&records.records}};
  sdpa::TimelineOptions options;
  options.max_bytes = uint64_t{1} << 20;
  std::ostringstream out;
  sdpa::write_timeline(out, {process}, options);
  (void)nlohmann::json::parse(out.str());  // throws, a finding, if the document is not JSON
  return 0;
}
