// Runs the traced command as a child process and passes its fate back like a shell does.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sdpa {

struct ChildOptions {
  std::vector<std::pair<std::string, std::string>> environment;  // set on top of ours
  bool quiet = false;                                            // stdout and stderr to /dev/null
  std::string stderr_path{};  // not empty: the child's stderr goes to this file (created or truncated)
};

// Runs `command` (looked up on PATH) and waits for it; SIGINT and SIGTERM sent to us meanwhile go
// to it. Returns its exit code, 128 + the signal that killed it, or 127 (not found) / 126 (not
// runnable) with the sentence in `not_started`.
int run_child(const std::vector<std::string>& command, const ChildOptions& options,
              std::string& not_started);

}  // namespace sdpa
