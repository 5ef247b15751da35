#include "profile/cupti_session.h"

#include <atomic>
#include <cstdlib>
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "profile/cupti_check.h"

namespace sdpa {
namespace {

// CUPTI's buffer callbacks are plain functions: they reach the one live session through this.
std::atomic<CuptiSession*> g_session{nullptr};

}  // namespace

std::unique_ptr<CuptiSession> CuptiSession::start(std::string& why_not) {
  const CuptiApi* api = load_cupti(why_not);
  if (api == nullptr) return nullptr;
  if (g_session.load() != nullptr) {
    why_not = "another CUPTI session is already recording in this process";
    return nullptr;
  }
  // NVTX v3 hands its ranges to the library this names; CUPTI then records them as markers.
  // A profiler that set it already holds CUPTI, and enable() below says so.
  setenv("NVTX_INJECTION64_PATH", api->path.c_str(), 0);
  try {
    std::unique_ptr<CuptiSession> session(new CuptiSession(*api));
    // Enabling fails here, not in the first case, when another subscriber holds CUPTI.
    Pass probe(*session);
    probe.finish();
    return session;
  } catch (const ApiError& e) {
    why_not = e.what();
    return nullptr;
  }
}

CuptiSession::CuptiSession(const CuptiApi& api) : api_(api), parser_(api) {
  g_session.store(this);
  try {
    SDPA_CHECK_CUPTI(api_.cuptiActivityRegisterCallbacks(&buffer_requested, &buffer_completed));
  } catch (...) {
    g_session.store(nullptr);
    throw;
  }
}

CuptiSession::~CuptiSession() {
  try {
    flush();  // every pass has disabled its kinds; what is left in CUPTI's buffers comes back now
  } catch (const ApiError&) {
    // Destruction cannot report it, and no pass waits for these records.
  }
  g_session.store(nullptr);
}

std::string CuptiSession::description() const { return fmt::format("CUPTI API {} ({})", api_.version, api_.path); }

uint64_t CuptiSession::timestamp() const {
  uint64_t t = 0;
  SDPA_CHECK_CUPTI(api_.cuptiGetTimestamp(&t));
  return t;
}

void CuptiSession::enable() { SDPA_CHECK_CUPTI(enable_recorded_kinds(api_)); }

void CuptiSession::disable() { SDPA_CHECK_CUPTI(disable_recorded_kinds(api_)); }

void CuptiSession::flush() { SDPA_CHECK_CUPTI(api_.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)); }

void CuptiSession::buffer_requested(uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = allocate_activity_buffer(*size);
  *max_records = 0;
}

void CuptiSession::buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, std::size_t,
                                    std::size_t valid_size) {
  if (CuptiSession* session = g_session.load(); session != nullptr && buffer != nullptr)
    session->parse(context, stream_id, buffer, valid_size);
  std::free(buffer);
}

void CuptiSession::parse(CUcontext context, uint32_t stream_id, uint8_t* buffer, std::size_t valid_size) {
  const std::lock_guard lock(mutex_);
  try {
    SDPA_CHECK_CUPTI(parser_.parse(context, stream_id, buffer, valid_size, records_));
  } catch (const ApiError&) {
    if (!callback_error_) callback_error_ = std::current_exception();
  }
}

CuptiSession::Pass::Pass(CuptiSession& session) : session_(session) {
  {
    const std::lock_guard lock(session_.mutex_);
    session_.records_ = ActivityRecords{};
    session_.callback_error_ = nullptr;
  }
  session_.enable();
}

CuptiSession::Pass::~Pass() {
  if (!recording_) return;
  try {
    session_.disable();
  } catch (const ApiError&) {
    // Already unwinding from the error that ended the pass early.
  }
}

ActivityRecords CuptiSession::Pass::finish() {
  SDPA_CHECK_CUDA(cudaDeviceSynchronize());
  session_.disable();
  recording_ = false;
  session_.flush();
  const std::lock_guard lock(session_.mutex_);
  if (session_.callback_error_) std::rethrow_exception(std::exchange(session_.callback_error_, nullptr));
  return std::exchange(session_.records_, ActivityRecords{});
}

}  // namespace sdpa
