#include "backends/backend.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "model/errors.h"
#include "model/number_text.h"
#include "backends/cudnn.h"
#include "backends/efficient.h"
#include "backends/flash.h"
#include "backends/flash3.h"
#include "backends/math.h"
#include "backends/naive.h"

namespace sdpa {

void Backend::backward(const AttentionTensors&, const GradientTensors&, cudaStream_t) {
  // The runner admits a backward case only for an entry with a backward: reaching here is a bug.
  throw std::logic_error("backward() called on a backend without a backward pass");
}

std::optional<std::string> pass_unsupported(const BackendEntry& entry, const Problem& problem) {
  if (!problem.has_backward() || entry.has_backward()) return std::nullopt;
  return fmt::format("{}: {} {}", pass_name(problem.pass), entry.name, entry.no_backward_reason);
}

std::span<const BackendEntry> backend_registry() {
  static const BackendEntry entries[] = {
      naive_backend_entry(),
      naive_inplace_backend_entry(),
      math_backend_entry(),
      efficient_backend_entry(),
      flash_backend_entry(),
      flash3_backend_entry(),
      cudnn_backend_entry(),
  };
  return entries;
}

std::optional<std::string> cannot_run(const BackendEntry& entry, const Problem& p,
                                      const DeviceInfo& device) {
  if (!entry.built()) return fmt::format("not built: {}", entry.not_built_reason);
  if (p.paged() && !entry.reads_paged_kv) return paged_kv_unsupported(entry.name);
  if (auto why = pass_unsupported(entry, p)) return why;
  return entry.unsupported(p, device);
}

const BackendEntry* find_backend(std::string_view name) {
  for (const BackendEntry& e : backend_registry())
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<BackendChoice> resolve_backends(const std::vector<std::string>& names) {
  std::vector<BackendChoice> out;
  const auto add = [&](BackendChoice c) {
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  };
  for (const std::string& name : names) {
    if (name == "all") {
      for (const BackendEntry& e : backend_registry())
        if (e.built()) add({&e, false});
      continue;
    }
    const std::size_t colon = name.find(':');
    const std::string base = name.substr(0, colon);
    const BackendEntry* e = find_backend(base);
    if (e == nullptr) {
      std::string known;
      for (const BackendEntry& b : backend_registry()) known += std::string(known.empty() ? "" : ", ") + std::string(b.name);
      throw InputError(fmt::format("unknown backend {} (known: {}, all; NAME:all for every variant)", echo(name), known));
    }
    if (colon == std::string::npos) {
      add({e, false});
    } else if (name.substr(colon + 1) != "all") {
      throw InputError(fmt::format("--backend {}: after the colon only \"all\" is known", echo(name)));
    } else if (e->built() && e->variants == nullptr) {
      throw InputError(fmt::format("--backend {}: {} has no variants", echo(name), e->name));
    } else {
      add({e, true});
    }
  }
  if (out.empty()) throw InputError("no backend to run");
  return out;
}

std::string case_backend_name(const BackendEntry& entry, const std::string& variant) {
  return variant.empty() ? std::string(entry.name) : fmt::format("{}[{}]", entry.name, variant);
}

}  // namespace sdpa
