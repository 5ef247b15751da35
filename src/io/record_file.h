// The records a traced process hands to `trace` (written by src/inject, read by src/trace): one
// file per process, one JSON object a line, appended as CUPTI's buffers complete.
//   {"schema":"sdpa-prof/trace-records","schema_version":1,"pid":123,"cupti":"..."}   first line
//   {"kernel":{...}} {"memcpy":{...}} {"memset":{...}} {"api":{...}} {"marker":{...}}
//   {"dropped":N}                      records CUPTI dropped
//   {"error":{"code":"...","message":"..."}}  the process could not record (another profiler, ...)
//   {"end":{}}                         last, when the process exited through exit() or main's
//   return
// A file without the end line was cut short (os._exit, a crash, a signal): its records are those
// written so far. Kernels, copies and memsets carry "place": [device, context, stream, graph,
// graph node]; API calls their kind, callback id, name, pid and tid; markers domain, pid, tid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "model/activity.h"

namespace sdpa {

inline constexpr const char* kRecordFileSchema = "sdpa-prof/trace-records";
inline constexpr int kRecordFileVersion = 1;
inline constexpr std::size_t kMaxRecordLine = std::size_t{1}
                                              << 20;  // a kernel's mangled name is the longest part
// The error code the injection writes when another CUPTI client holds the subscriber.
inline constexpr const char* kRecordErrorOtherProfiler = "other_profiler";

// Each a line of the file, newline included.
std::string record_file_header(int64_t pid, const std::string& cupti);
std::string record_line(const KernelRecord& k);
std::string record_line(const MemcpyRecord& m);
std::string record_line(const MemsetRecord& m);
std::string record_line(const ApiRecord& a);
std::string record_line(const MarkerRecord& m);
std::string dropped_line(uint64_t dropped);
std::string error_line(const std::string& code, const std::string& message);
std::string end_line();

struct RecordFile {
  int64_t pid = 0;
  std::string cupti;
  ActivityRecords records;
  bool complete = false;       // the end line was read
  std::string partial_reason;  // why the records stop early, when they do
  std::string error_code;      // the process's own report that it could not record, and why
  std::string error;
  uint64_t records_left_out = 0;  // past `max_records`: counted, not kept
};

// Reads one process's file as hostile input: a file that is not one (no header, another schema,
// a newer version) is an InputError; a line cut short or malformed ends the records there, and
// the file is then partial. At most `max_records` records are kept (bounded memory).
RecordFile read_record_file(const std::string& path, std::size_t max_records);

}  // namespace sdpa
