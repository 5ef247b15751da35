#include "model/case_key.h"

#include <functional>

namespace sdpa {

std::size_t CaseKeyHash::operator()(const CaseKey& k) const {
  const std::hash<std::string> h;
  return h(k.backend) * 31 + h(k.problem);
}

CaseKey case_key(const std::string& backend, const Problem& p, const std::vector<AxisSpec>& axes) {
  CaseKey key{backend, {}};
  for (const AxisSpec& a : axes) {
    if (!a.identity || !axis_present(a, p)) continue;
    key.problem += (key.problem.empty() ? "" : " ") + a.name + "=" + axis_value_text(a.read(p));
  }
  return key;
}

}  // namespace sdpa
