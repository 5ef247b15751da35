// What `trace` tells the processes it runs, through their environment.
#pragma once

namespace sdpa {

// The folder the injection library writes each process's records to.
inline constexpr const char* kTraceDirEnv = "SDPA_PROF_TRACE_DIR";
inline constexpr const char* kRecordFileSuffix = ".records";

}  // namespace sdpa
