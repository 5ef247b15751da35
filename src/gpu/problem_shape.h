// The sizes of a problem as device code sees them, with the softmax scale resolved.
#pragma once

#include "attention_shape.h"
#include "model/problem.h"

namespace sdpa {

AttentionShape attention_shape(const Problem& p);

}  // namespace sdpa
