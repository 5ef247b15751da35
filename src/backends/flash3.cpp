#include "backends/flash3.h"

#include <memory>
#include <string>
#include <vector>

#ifdef SDPA_HAVE_FLASH3
#include "backends/fused_kernel.h"
#include "flash3_decode_plan.h"
#include "flash3_fwd.h"
#endif

namespace sdpa {

namespace {

constexpr std::string_view kSummary =
    "fused, FlashAttention-3 design: TMA into a K/V ring, wgmma, a producer warpgroup and two or "
    "three consumer warpgroups; Sq <= 16 runs a split-KV decode kernel instead (grouped heads "
    "packed into one tile; reads a paged K/V cache too); variants: decode, and the consumers' "
    "schedules (serial, overlap, pingpong), each also with a persistent grid (not causal: the "
    "last round's tiles split along the keys); backward: a CTA per 128 keys, TMA producer, two "
    "wgmma consumers, dQ staged in shared memory and added by a bulk reduce-add a step";

#ifdef SDPA_HAVE_FLASH3
// The schedules as variants (flash3:all), named as in kernels/flash3_fwd.h; without one, each
// head dim runs its default (kernels/flash3_traits.cuh, docs/kernel-notes.md).
struct Variant {
  std::string_view name;
  Flash3Schedule schedule;
  bool persistent;
};
constexpr Variant kVariants[] = {
    {"serial", Flash3Schedule::serial, false},
    {"overlap", Flash3Schedule::overlap, false},
    {"pingpong", Flash3Schedule::pingpong, false},
    {"serial-persistent", Flash3Schedule::serial, true},
    {"overlap-persistent", Flash3Schedule::overlap, true},
    {"pingpong-persistent", Flash3Schedule::pingpong, true},
};

constexpr std::string_view kDecodeVariant = "decode";

// A decode shape runs the decode kernel, and beside it the prefill schedules where K and V are
// contiguous (what flash3 ran there before its decode kernel); only the decode kernel reads pages.
std::vector<std::string> variant_names(const Problem& p) {
  std::vector<std::string> names;
  // The decode kernel keeps no row statistics: no backward follows it.
  if (p.seq_q <= flash3::kDecodeMaxSeqQ && !p.has_backward()) names.emplace_back(kDecodeVariant);
  if (p.paged()) return names;
  for (const Variant& v : kVariants) names.emplace_back(v.name);
  return names;
}

std::unique_ptr<Backend> create_flash3(const std::string& variant) {
  if (variant == kDecodeVariant) return make_fused_backend(kFlash3Decode);
  for (const Variant& v : kVariants)
    if (variant == v.name) return make_fused_backend(flash3_forward(v.schedule, v.persistent));
  return make_fused_backend(kFlash3Forward);
}

BackendEntry flash3_entry() {
  BackendEntry e = fused_backend_entry<kFlash3Forward>("flash3", kSummary);
  e.create = create_flash3;
  e.variants = variant_names;
  e.pytorch_path = {};  // PyTorch 2.11 has no FlashAttention-3 path
  return e;
}
#endif

}  // namespace

const BackendEntry& flash3_backend_entry() {
#ifdef SDPA_HAVE_FLASH3
  static const BackendEntry entry = flash3_entry();
#else
  static const BackendEntry entry{
      .name = "flash3",
      .summary = kSummary,
      .dtypes = "bf16, fp16",
      .head_dims = "64, 128",
      .archs = "sm_90a",
      .not_built_reason = "its kernel is sm_90a code and CMAKE_CUDA_ARCHITECTURES has no 90a",
      .no_backward_reason = "",  // its backward is built with its forward
      .unsupported = nullptr,
      .workspace_bytes = nullptr,
      .create = nullptr,
  };
#endif
  return entry;
}

}  // namespace sdpa
