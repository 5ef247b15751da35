// `sdpa-prof trace -- CMD`: runs CMD with our injection library, then reads each process's
// records and the results CMD handed over, and turns them into cases.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/activity.h"
#include "model/device.h"
#include "model/result.h"

namespace sdpa {

struct TraceRequest {
  std::vector<std::string> command;
  std::string injection_library;  // find_injection_library()
  int device = 0;                 // whose occupancy limits apply to the records
  bool keep_records = false;      // hand each process's records back (for the timeline)
  bool keep_stderr = false;       // the command's stderr into TraceOutcome::stderr_text, not ours
};

struct ProcessRecords {
  int64_t pid = 0;
  ActivityRecords records;
};

struct TraceOutcome {
  int exit_code = 0;        // CMD's: its code, 128 + signal, 127 when not found
  std::string not_started;  // why CMD did not start, when it did not
  std::vector<CaseResult> cases;
  TraceInfo info;
  std::optional<DeviceInfo> device;  // queried only when CMD ran GPU work
  std::vector<std::string>
      notes;            // said on stderr: why occupancy is off, a process that could not record
  std::string refused;  // a process found another CUPTI client holding CUPTI: one sentence
  std::vector<ProcessRecords> records;  // with keep_records, in the order of info.processes
  std::string stderr_text;              // with keep_stderr: the command's stderr, its last 64 KiB
};

// Removes the record folder of a trace in progress; only async-signal-safe calls (for a signal
// that ends the tool after the command has ended, while its records are read).
void remove_record_folder_from_signal_handler();

// libsdpa-prof-inject.so beside the running executable, or what SDPA_PROF_INJECT_LIBRARY names;
// InputError when it is not there.
std::string find_injection_library();

// Runs the command and analyses what it recorded. InputError when another profiler already
// injects into CUDA programs here (CUDA_INJECTION64_PATH set). A record file that is not one
// (a FIFO, garbage, another pid in its header) makes its process partial, with the reason.
TraceOutcome run_traced(const TraceRequest& request);

}  // namespace sdpa
