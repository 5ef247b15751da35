// The injection library of `sdpa-prof trace`: the CUDA driver loads it into the traced process
// (CUDA_INJECTION64_PATH) and calls InitializeInjection when the process initializes CUDA; NVTX
// calls InitializeInjectionNvtx2 (NVTX_INJECTION64_PATH), which hands NVTX to CUPTI so that
// ranges arrive as marker records. Records go to "<SDPA_PROF_TRACE_DIR>/<pid>.records"
// (io/record_file.h) as CUPTI's buffers complete, so a process that never returns from main
// still leaves what it ran.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "inject/trace_env.h"
#include "io/record_file.h"
#include "profile/activity_parse.h"
#include "profile/cupti_library.h"

namespace sdpa {
namespace {

// Buffers complete when full or at each flush period: what a cut-short process loses at most.
constexpr uint32_t kFlushPeriodMs = 100;

struct Injection {
  const CuptiApi* api = nullptr;
  std::unique_ptr<ActivityParser> parser;  // under mutex
  CUpti_SubscriberHandle subscriber = nullptr;
  int fd = -1;
  pid_t pid = 0;        // the process that opened fd: a child forked without exec writes nothing
  bool closed = false;  // the end line is written: nothing may follow it
  std::mutex mutex;     // CUPTI completes buffers on its own thread and at exit on the caller's
};

Injection& injection() {
  static Injection* one = new Injection;  // never destroyed: CUPTI may call back during exit
  return *one;
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk: the parent reads a file cut short, which says partial
    done += static_cast<std::size_t>(n);
  }
}

std::string lines_of(const ActivityRecords& r) {
  std::string text;
  for (const KernelRecord& k : r.kernels) text += record_line(k);
  for (const MemcpyRecord& m : r.memcpys) text += record_line(m);
  for (const MemsetRecord& m : r.memsets) text += record_line(m);
  for (const ApiRecord& a : r.api_calls) text += record_line(a);
  for (const MarkerRecord& m : r.markers) text += record_line(m);
  if (r.dropped > 0) text += dropped_line(r.dropped);
  return text;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = allocate_activity_buffer(*size);
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, std::size_t,
                               std::size_t valid_size) {
  Injection& in = injection();
  if (buffer != nullptr) {
    const std::lock_guard lock(in.mutex);
    if (in.parser && !in.closed && ::getpid() == in.pid) {
      ActivityRecords records;
      const CUptiResult parsed = in.parser->parse(context, stream_id, buffer, valid_size, records);
      std::string text = lines_of(records);
      if (parsed != CUPTI_SUCCESS)
        text += error_line(
            "cupti", fmt::format("reading CUPTI's records failed: {}", cupti_result_text(parsed)));
      write_all(in.fd, text);
    }
  }
  std::free(buffer);
}

// The last records, then the end line: the process exits normally.
void finish() {
  Injection& in = injection();
  if (::getpid() != in.pid) return;
  if (in.api != nullptr)
    static_cast<void>(in.api->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  const std::lock_guard lock(in.mutex);
  if (in.closed) return;
  write_all(in.fd, end_line());
  in.closed = true;
}

void CUPTIAPI ignore_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

// The error as the file's last line before the end: the parent reports it.
int give_up(Injection& in, const std::string& code, const std::string& message) {
  write_all(in.fd, error_line(code, message));
  write_all(in.fd, end_line());
  in.closed = true;
  in.api = nullptr;
  in.parser.reset();
  return 1;
}

int start() {
  const char* dir = std::getenv(kTraceDirEnv);
  if (dir == nullptr || *dir == '\0') return 1;  // loaded outside `trace`: record nothing
  Injection& in = injection();
  if (in.fd >= 0) return 1;  // the driver initializes once per process
  const std::string path = fmt::format("{}/{}{}", dir, ::getpid(), kRecordFileSuffix);
  in.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
  if (in.fd < 0) return 1;
  in.pid = ::getpid();
  std::string why;
  const CuptiApi* api = load_cupti(why);
  write_all(in.fd,
            record_file_header(
                ::getpid(),
                api != nullptr ? fmt::format("CUPTI API {} ({})", api->version, api->path) : ""));
  if (api == nullptr) return give_up(in, "no_cupti", why);
  // The subscriber is CUPTI's one seat: holding it keeps a second client from taking our buffers.
  const CUptiResult subscribed = api->cuptiSubscribe(&in.subscriber, &ignore_callback, nullptr);
  if (subscribed == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    return give_up(in, kRecordErrorOtherProfiler,
                   "another CUPTI client (Nsight Systems, Nsight Compute, torch.profiler, ...) "
                   "already holds CUPTI in the traced process");
  if (subscribed != CUPTI_SUCCESS)
    return give_up(in, "cupti",
                   fmt::format("cuptiSubscribe failed: {}", cupti_result_text(subscribed)));
  if (const CUptiResult r =
          api->cuptiActivityRegisterCallbacks(&buffer_requested, &buffer_completed);
      r != CUPTI_SUCCESS)
    return give_up(in, "cupti",
                   fmt::format("cuptiActivityRegisterCallbacks failed: {}", cupti_result_text(r)));
  in.api = api;
  in.parser = std::make_unique<ActivityParser>(*api);
  if (const CUptiResult r = enable_recorded_kinds(*api); r != CUPTI_SUCCESS)
    return give_up(in, "cupti",
                   fmt::format("cuptiActivityEnable failed: {}", cupti_result_text(r)));
  if (const CUptiResult r = api->cuptiActivityFlushPeriod(kFlushPeriodMs); r != CUPTI_SUCCESS)
    return give_up(in, "cupti",
                   fmt::format("cuptiActivityFlushPeriod failed: {}", cupti_result_text(r)));
  std::atexit(&finish);
  return 1;
}

}  // namespace
}  // namespace sdpa

extern "C" {

__attribute__((visibility("default"))) int InitializeInjection() {
  return sdpa::start();
}

// NVTX's loader asks the library NVTX_INJECTION64_PATH names; CUPTI's own entry point does the
// work, so NVTX ranges reach the activity buffers as markers.
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    const void* (*get_export_table)(uint32_t)) {
  std::string why;
  const sdpa::CuptiApi* api = sdpa::load_cupti(why);
  if (api == nullptr || api->InitializeInjectionNvtx2 == nullptr) return 0;
  return api->InitializeInjectionNvtx2(get_export_table);
}

}  // extern "C"
