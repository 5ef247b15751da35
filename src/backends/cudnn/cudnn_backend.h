// The cudnn backend's functions behind its registry entry (backends/cudnn.cpp); built only where
// cuDNN's headers were found.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"

namespace sdpa {

std::optional<std::string> cudnn_unsupported(const Problem& p, const DeviceInfo& device);
std::size_t cudnn_workspace_bytes(const Problem& p);
// `variant`: empty for heuristics' first choice, else a name cudnn_engine_variants gave.
std::unique_ptr<Backend> create_cudnn_backend(const std::string& variant);
// Every engine config cuDNN's heuristics propose for `p` that finalizes, as "eng2.cfg32".
std::vector<std::string> cudnn_engine_variants(const Problem& p);

}  // namespace sdpa
