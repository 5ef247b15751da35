// The one interface every attention backend implements, and the registry that lists them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "device_info.h"
#include "problem.h"

namespace sdpa {

// Q, K, V: [B, Hkv or Hq, S, D] row-major of the problem's dtype; O: [B, Hq, Sq, D].
struct AttentionTensors {
  const void* q;
  const void* k;
  const void* v;
  void* o;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // One-time work for `problem`: workspace, handles, masks, plans. Never timed.
  virtual void prepare(const Problem& problem, cudaStream_t stream) = 0;
  // One forward pass, enqueued on `stream`.
  virtual void run(const AttentionTensors& tensors, cudaStream_t stream) = 0;
  // What was chosen for the prepared problem when the backend chooses (cuDNN: engine and knobs).
  virtual std::string chosen_config() const { return {}; }
};

struct BackendEntry {
  std::string_view name;
  std::string_view summary;
  std::string_view dtypes;     // what `list` prints
  std::string_view head_dims;  // what `list` prints
  std::string_view archs;      // what `list` prints
  // Empty when this binary can run the backend; otherwise why it cannot.
  std::string_view not_built_reason;
  // A reason when the backend cannot run `problem` on `device`, nullopt when it can.
  std::optional<std::string> (*unsupported)(const Problem& problem, const DeviceInfo& device);
  // Device memory the backend allocates in prepare(), beyond Q, K, V and O.
  std::size_t (*workspace_bytes)(const Problem& problem);
  std::unique_ptr<Backend> (*create)();

  bool built() const { return not_built_reason.empty(); }
};

std::span<const BackendEntry> backend_registry();
const BackendEntry* find_backend(std::string_view name);

}  // namespace sdpa
