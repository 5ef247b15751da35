// The one interface every attention backend implements, and the registry that lists them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/device.h"
#include "model/problem.h"
#include "model/result.h"
#include "paged_kv.h"

namespace sdpa {

// Q, K, V: [B, Hkv or Hq, S, D] row-major of the problem's dtype; O: [B, Hq, Sq, D]. A paged
// problem's K and V are in `paged` alone (k and v null), for the backends that read pages.
struct AttentionTensors {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  const PagedKv* paged = nullptr;
};

// The backward's tensors: dO in ([B, Hq, Sq, D]); dQ out ([B, Hq, Sq, D]), dK and dV out
// ([B, Hkv, Skv, D], each summed over the query heads that share its key/value head).
struct GradientTensors {
  const void* d_out;
  void* dq;
  void* dk;
  void* dv;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // One-time work for `problem`: workspace, handles, masks, plans. Never timed.
  virtual void prepare(const Problem& problem, cudaStream_t stream) = 0;
  // One forward pass, enqueued on `stream`.
  virtual void run(const AttentionTensors& tensors, cudaStream_t stream) = 0;
  // One backward pass of the last run() on the same tensors, enqueued on `stream`, from `grads`'
  // dO and what that forward kept (P, or the softmax statistics). Called only for a problem whose
  // pass has a backward, on a backend whose entry has one (no_backward_reason empty).
  virtual void backward(const AttentionTensors& tensors, const GradientTensors& grads, cudaStream_t stream);
  // What the backend chose for the prepared problem and what its setup cost (cuDNN: engine,
  // knobs, plan build times); empty for backends that choose nothing.
  virtual BackendSetup setup() const { return {}; }
};

// The reason of a backend whose backward is not written (yet).
inline constexpr std::string_view kNoBackwardYet = "has no backward pass in this version";

struct BackendEntry {
  std::string_view name;
  std::string_view summary;
  std::string_view dtypes;     // what `list` prints
  std::string_view head_dims;  // what `list` prints
  std::string_view archs;      // what `list` prints
  // Empty when this binary can run the backend; otherwise why it cannot.
  std::string_view not_built_reason;
  // Empty when the backend has a backward pass (--pass bwd, fwd+bwd); otherwise why not, as
  // "<name> <reason>" reads.
  std::string_view no_backward_reason = kNoBackwardYet;
  // A reason when the backend cannot run `problem` on `device`, nullopt when it can.
  std::optional<std::string> (*unsupported)(const Problem& problem, const DeviceInfo& device);
  // Device memory the backend allocates in prepare(), beyond Q, K, V and O.
  std::size_t (*workspace_bytes)(const Problem& problem);
  // `variant`: one of variants()' names, or empty for the backend's default choice.
  std::unique_ptr<Backend> (*create)(const std::string& variant);
  // The variants `--backend NAME:all` runs for `problem`, each as a case of its own named
  // NAME[variant] (cuDNN: every engine config its heuristics propose); null when there are none.
  std::vector<std::string> (*variants)(const Problem& problem) = nullptr;
  // The bytes its kernels must move through DRAM in one forward, by the backend's own count of
  // its passes (checked against the measured counters); null when it keeps no count.
  double (*kernel_dram_bytes)(const Problem& problem) = nullptr;
  // The PyTorch path this backend reproduces, as share/sdpa-prof/torch_sdpa.py names it
  // (--with-torch runs it as torch:<name>); empty when PyTorch has none.
  std::string_view pytorch_path = {};
  // Reads K and V through a block table from a page pool (AttentionTensors::paged); a backend
  // that does not is never given a paged problem, it is skipped with the reason.
  bool reads_paged_kv = false;

  bool built() const { return not_built_reason.empty(); }
  bool has_backward() const { return no_backward_reason.empty(); }
};

std::span<const BackendEntry> backend_registry();
// Why `entry` cannot run `problem` on `device` (not built, a K/V layout it cannot read, its own
// unsupported()), or nullopt when it can.
std::optional<std::string> cannot_run(const BackendEntry& entry, const Problem& problem,
                                      const DeviceInfo& device);
const BackendEntry* find_backend(std::string_view name);

// "bwd: flash has no backward pass in this version" when `problem`'s pass needs a backward that
// `entry` lacks; nullopt otherwise. Needs no device: a dry run says it too.
std::optional<std::string> pass_unsupported(const BackendEntry& entry, const Problem& problem);

// One entry of --backend: a backend, and whether to run each of its variants ("cudnn:all").
struct BackendChoice {
  const BackendEntry* entry = nullptr;
  bool every_variant = false;
  bool operator==(const BackendChoice&) const = default;
};
// "all", "flash", "cudnn:all", ...; throws InputError for an unknown name or a backend without variants.
std::vector<BackendChoice> resolve_backends(const std::vector<std::string>& names);
// The name a case of `entry` carries: "cudnn", or "cudnn[eng2.cfg32]" for a variant.
std::string case_backend_name(const BackendEntry& entry, const std::string& variant);

}  // namespace sdpa
