// The flash backend's fused forward kernel (FlashAttention-2 design, mma.sync, sm_80 and newer).
#pragma once

#include "fused_forward.h"

namespace sdpa {

extern const FusedForwardKernel kFlashForward;
// The same forward, whose backward takes 64-query steps at head dim 128 (the variant bwd-64q).
extern const FusedForwardKernel kFlashForwardBwd64q;

}  // namespace sdpa
