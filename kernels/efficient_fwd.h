// The efficient backend's fused forward kernel: the memory-efficient (xFormers / CUTLASS
// "cutlassF") design, sm_80 and newer.
#pragma once

#include "fused_forward.h"

namespace sdpa {

extern const FusedForwardKernel kEfficientForward;

}  // namespace sdpa
