// The study's CPU claims, stated as measured: findings over the CPU ops of traced cases (a
// program under emit_nvtx), each comparing a case with the other cases of its problem, each with
// its figures, and none when the ops do not show it.
#pragma once

#include <vector>

#include "model/result.h"

namespace sdpa {

// masked-fill-ops: the out-of-place masked fill's ops against the in-place one's;
// mask-ops-every-call: aten::ones and aten::tril building the causal mask in every forward;
// safe-softmax-ops: aten::_safe_softmax and the ops under it;
// flash-transposes: aten::transpose in the flash path, against cuDNN's path;
// host-cudnn-flash: host µs per call of cuDNN's path against flash's (on the cuDNN case).
std::vector<Finding> op_findings(const CaseResult& c, const std::vector<CaseResult>& cases);

// Each case's op findings added to its profile's findings.
void add_op_findings(std::vector<CaseResult>& cases);

}  // namespace sdpa
