// The flash backend's fused forward kernel (FlashAttention-2 design, mma.sync, sm_80 and newer).
#pragma once

#include "fused_forward.h"

namespace sdpa {

extern const FusedForwardKernel kFlashForward;

}  // namespace sdpa
