#include "backends/flash.h"

#include <string>
#include <string_view>
#include <vector>

#include "backends/fused_kernel.h"
#include "flash_fwd.h"

namespace sdpa {

namespace {

// The backward's query steps at head dim 128 as variants (flash:all), to measure one against the
// other in one process: bwd-32q is the default (kernels/flash_bwd_kernel.cuh), bwd-64q FA2's
// 128 x 64 tile. Their forwards are the same kernel; elsewhere flash has no variants.
constexpr std::string_view kBwd32q = "bwd-32q";
constexpr std::string_view kBwd64q = "bwd-64q";

std::vector<std::string> variant_names(const Problem& p) {
  if (!p.has_backward() || p.head_dim != 128) return {""};
  return {std::string(kBwd32q), std::string(kBwd64q)};
}

std::unique_ptr<Backend> create_flash(const std::string& variant) {
  return make_fused_backend(variant == kBwd64q ? kFlashForwardBwd64q : kFlashForward);
}

}  // namespace

const BackendEntry& flash_backend_entry() {
  static const BackendEntry entry = [] {
    BackendEntry e = fused_backend_entry<kFlashForward>(
        "flash",
        "fused, FlashAttention-2 design: mma.sync + ldmatrix, cp.async double buffering, softmax "
        "and P in registers; backward: a CTA per 128 keys, dQ by fp32 atomics; variants (D128 "
        "backward): bwd-32q (the default), bwd-64q (query steps)");
    e.create = create_flash;
    e.variants = variant_names;
    return e;
  }();
  return entry;
}

}  // namespace sdpa
