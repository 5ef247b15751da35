// --case-timeout: a case that runs past its limit (a hung kernel cannot be cancelled) ends the
// process after `on_expired` has saved what the sweep measured so far.
#pragma once

#include <condition_variable>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace sdpa {

class CaseWatchdog {
 public:
  // `on_expired` runs on the watchdog's thread with the name of the case that overran; it must
  // not return (it writes the partial results and exits).
  CaseWatchdog(double timeout_s, std::function<void(const std::string& case_name)> on_expired);
  ~CaseWatchdog();
  CaseWatchdog(const CaseWatchdog&) = delete;
  CaseWatchdog& operator=(const CaseWatchdog&) = delete;

  void start_case(const std::string& case_name);  // restarts the clock

 private:
  void watch();

  std::chrono::duration<double> timeout_;
  std::function<void(const std::string&)> on_expired_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string current_;
  std::chrono::steady_clock::time_point deadline_;
  bool armed_ = false;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace sdpa
