#include "cli/case_watchdog.h"

namespace sdpa {

CaseWatchdog::CaseWatchdog(double timeout_s, std::function<void(const std::string&)> on_expired)
    : timeout_(timeout_s), on_expired_(std::move(on_expired)), thread_([this] { watch(); }) {}

CaseWatchdog::~CaseWatchdog() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void CaseWatchdog::start_case(const std::string& case_name) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    current_ = case_name;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout_);
    armed_ = true;
  }
  changed_.notify_all();
}

void CaseWatchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!done_) {
    if (!armed_) {
      changed_.wait(lock);
      continue;
    }
    const auto deadline = deadline_;
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && !done_ && deadline_ == deadline) {
      const std::string overran = current_;
      lock.unlock();
      on_expired_(overran);
      return;
    }
  }
}

}  // namespace sdpa
