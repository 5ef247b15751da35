// fp64 attention and its backward on the CPU, for checking the GPU references on small problems.
#pragma once

#include <vector>

#include "model/problem.h"

namespace sdpa {

// q: [B, Hq, Sq, D], k and v: [B, Hkv, Skv, D], all as float; returns O [B, Hq, Sq, D].
std::vector<double> reference_attention_cpu(const Problem& p, const std::vector<float>& q,
                                            const std::vector<float>& k, const std::vector<float>& v);

struct Gradients {
  std::vector<double> dq;  // [B, Hq, Sq, D]
  std::vector<double> dk;  // [B, Hkv, Skv, D], summed over the query heads of each group
  std::vector<double> dv;  // [B, Hkv, Skv, D], likewise
};

// The gradients of sum(O * d_out) with respect to q, k and v: dV = P^T dO, dP = dO V^T,
// dS = P * (dP - rowsum(dO * O)), dQ = scale * dS K, dK = scale * dS^T Q.
Gradients reference_attention_backward_cpu(const Problem& p, const std::vector<float>& q,
                                           const std::vector<float>& k, const std::vector<float>& v,
                                           const std::vector<float>& d_out);

}  // namespace sdpa
