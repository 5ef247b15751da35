// A library call that may crash the process, tried first in a forked child: CUPTI's host-side
// metric configuration died with SIGSEGV inside libnvperf_host on an H100 (CUDA 13.0, driver
// 580), taking the whole sweep with it. The child runs host code only, never CUDA.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace sdpa {

// Runs `work` in a child process and waits up to `timeout_ms`. nullopt when the child exited,
// whatever `work` decided (the caller then does the work itself and reports its own errors);
// otherwise what ended it ("crashed with SIGSEGV (Segmentation fault)", "did not finish within
// 30 s"), or why no child could be started.
std::optional<std::string> dies_in_a_child(const std::function<void()>& work, int timeout_ms);

}  // namespace sdpa
