// The CPU side of a forward: the operators a traced program named with NVTX ranges (PyTorch's
// emit_nvtx names one per aten op), nested as they ran, with their CPU time and the GPU work each
// launched itself. Plain data, read by every printer and the op findings.
#pragma once

#include <string>
#include <vector>

namespace sdpa {

// An NVTX op name split: "aten::transpose, seq = 12, op_id = 34, sizes = [[8, 16], [], []]"
// -> name "aten::transpose", shapes "[[8, 16], [], []]". A name without PyTorch's suffix is all name.
struct OpName {
  std::string name;
  std::string shapes;  // "" when the range gave none
};
OpName split_op_name(const std::string& range_name);

// One op at one place in the forward's call tree (the same name under two parents is two rows),
// in the order of its first call. Figures are per forward (mean over the profiled forwards).
struct OpProfile {
  std::string name;
  std::vector<std::string> shapes;  // the distinct input shapes of its calls, at most kMaxOpShapes
  int parent = -1;                  // index of the enclosing op in OpsProfile::ops; -1 at the top
  int depth = 0;                    // 0 for an op the forward called itself
  double calls = 0;
  double total_us = 0;  // CPU wall time inside the op, its children included
  double self_us = 0;   // the same less its child ops' time
  // GPU work the op launched itself (its child ops' launches are theirs).
  double kernels = 0;
  double memcpys = 0;
  double memsets = 0;
};

inline constexpr std::size_t kMaxOpShapes = 8;

struct OpsProfile {
  std::vector<OpProfile> ops;  // a parent before its children
  double host_us = 0;          // the forward range's CPU wall time
  double launch_api_us = 0;    // time inside the calls that launched GPU work (kernels, copies, sets)
  double launches_outside_ops = 0;  // GPU work per forward launched inside the forward but no op
  int unclosed = 0;                 // op ranges that never ended: left out of the table

  double launches() const;  // kernels + memcpys + memsets of every op, per forward
};

// key_averages' view: one row per op name (calls, total, self and launches added over the call
// tree's rows), in the order of first appearance. Parent and depth are the first row's.
std::vector<OpProfile> ops_by_name(const OpsProfile& ops);

// The rows under ops[root] (itself included), in table order.
std::vector<const OpProfile*> op_subtree(const OpsProfile& ops, std::size_t root);

}  // namespace sdpa
