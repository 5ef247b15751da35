// The flash3 backend's fused forward kernel (FlashAttention-3 design: TMA, wgmma, warp
// specialisation; sm_90a only). Declared only in builds whose architectures include sm_90a
// (SDPA_HAVE_FLASH3).
#pragma once

#include "fused_forward.h"

namespace sdpa {

extern const FusedForwardKernel kFlash3Forward;

}  // namespace sdpa
