#include "model/ops.h"

#include <algorithm>
#include <map>

namespace sdpa {

OpName split_op_name(const std::string& range_name) {
  // PyTorch appends ", seq = N", ", op_id = N", ", sizes = [...]", ", input_op_ids = [...]" in
  // that order; an op's own name never holds ", ".
  const std::size_t comma = range_name.find(", ");
  if (comma == std::string::npos) return OpName{range_name, ""};
  OpName out{range_name.substr(0, comma), ""};
  const std::string sizes = ", sizes = ";
  const std::size_t at = range_name.find(sizes, comma);
  if (at == std::string::npos) return out;
  const std::size_t begin = at + sizes.size();
  const std::size_t end = range_name.find(", input_op_ids = ", begin);
  out.shapes = range_name.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  return out;
}

double OpsProfile::launches() const {
  double n = 0;
  for (const OpProfile& op : ops) n += op.kernels + op.memcpys + op.memsets;
  return n;
}

std::vector<OpProfile> ops_by_name(const OpsProfile& ops) {
  std::vector<OpProfile> rows;
  std::map<std::string, std::size_t> row_of;
  for (const OpProfile& op : ops.ops) {
    const auto [it, added] = row_of.try_emplace(op.name, rows.size());
    if (added) {
      rows.push_back(op);
      continue;
    }
    OpProfile& row = rows[it->second];
    row.calls += op.calls;
    row.total_us += op.total_us;
    row.self_us += op.self_us;
    row.kernels += op.kernels;
    row.memcpys += op.memcpys;
    row.memsets += op.memsets;
    for (const std::string& s : op.shapes)
      if (row.shapes.size() < kMaxOpShapes && std::find(row.shapes.begin(), row.shapes.end(), s) == row.shapes.end())
        row.shapes.push_back(s);
  }
  return rows;
}

std::vector<const OpProfile*> op_subtree(const OpsProfile& ops, std::size_t root) {
  std::vector<const OpProfile*> out;
  if (root >= ops.ops.size()) return out;
  out.push_back(&ops.ops[root]);
  // A child's row comes after its parent's, not always right after it (a later call adds rows).
  std::vector<bool> inside(ops.ops.size(), false);
  inside[root] = true;
  for (std::size_t i = root + 1; i < ops.ops.size(); ++i) {
    const int parent = ops.ops[i].parent;
    if (parent < 0 || !inside[static_cast<std::size_t>(parent)]) continue;
    inside[i] = true;
    out.push_back(&ops.ops[i]);
  }
  return out;
}

}  // namespace sdpa
