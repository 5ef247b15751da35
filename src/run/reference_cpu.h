// fp64 attention on the CPU, for checking the GPU reference on small problems.
#pragma once

#include <vector>

#include "model/problem.h"

namespace sdpa {

// q: [B, Hq, Sq, D], k and v: [B, Hkv, Skv, D], all as float; returns O [B, Hq, Sq, D].
std::vector<double> reference_attention_cpu(const Problem& p, const std::vector<float>& q,
                                            const std::vector<float>& k, const std::vector<float>& v);

}  // namespace sdpa
