// One CUPTI activity session per run: kernels, memcpys, memsets, runtime and driver API calls
// and NVTX markers, recorded only inside profile passes (CUPTI is off while timing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "model/activity.h"
#include "profile/activity_parse.h"
#include "profile/cupti_library.h"

namespace sdpa {

class CuptiSession {
 public:
  // nullptr, with the reason in `why_not`, when CUPTI is missing or cannot record here (another
  // profiler such as Nsight Systems or torch.profiler holds it, no permission, ...).
  static std::unique_ptr<CuptiSession> start(std::string& why_not);
  ~CuptiSession();
  CuptiSession(const CuptiSession&) = delete;
  CuptiSession& operator=(const CuptiSession&) = delete;

  std::string description() const;  // "CUPTI API 130001 (/usr/local/cuda/.../libcupti.so.13)"
  uint64_t timestamp() const;        // CUPTI's clock, the one its records use

  // Records from construction to finish(); a pass left without finish() stops recording.
  class Pass {
   public:
    explicit Pass(CuptiSession& session);
    ~Pass();
    Pass(const Pass&) = delete;
    Pass& operator=(const Pass&) = delete;
    // Waits for the device, stops recording and returns what the pass recorded.
    ActivityRecords finish();

   private:
    CuptiSession& session_;
    bool recording_ = true;
  };

 private:
  explicit CuptiSession(const CuptiApi& api);
  void enable();
  void disable();
  void flush();

  static void buffer_requested(uint8_t** buffer, std::size_t* size, std::size_t* max_records);
  static void buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, std::size_t size,
                               std::size_t valid_size);
  void parse(CUcontext context, uint32_t stream_id, uint8_t* buffer, std::size_t valid_size);

  const CuptiApi& api_;
  std::mutex mutex_;  // CUPTI delivers buffers on its own thread
  ActivityParser parser_;  // under mutex_
  ActivityRecords records_;
  std::exception_ptr callback_error_;  // a CUPTI call that failed in a callback, raised by finish()
};

}  // namespace sdpa
