#include "profile/op_findings.h"

#include <algorithm>
#include <functional>
#include <string_view>

#include <fmt/format.h>

#include "model/case_key.h"

namespace sdpa {
namespace {

// PyTorch's op for each SDPA path: which path a traced case ran, whatever its backend is called.
constexpr std::string_view kFlashOp = "aten::_scaled_dot_product_flash_attention";
constexpr std::string_view kCudnnOp = "aten::_scaled_dot_product_cudnn_attention";
constexpr std::string_view kSdpaOp = "aten::scaled_dot_product_attention";

const OpsProfile* ops_of(const CaseResult& c) { return c.profile && c.profile->ops ? &*c.profile->ops : nullptr; }

const OpProfile* op_named(const std::vector<OpProfile>& by_name, std::string_view name) {
  const auto it = std::find_if(by_name.begin(), by_name.end(), [&](const OpProfile& op) { return op.name == name; });
  return it == by_name.end() ? nullptr : &*it;
}

bool has_op(const OpsProfile& o, std::string_view name) {
  return std::any_of(o.ops.begin(), o.ops.end(), [&](const OpProfile& op) { return op.name == name; });
}

// The ops under every outermost op that `root` picks, added up per forward.
struct Stage {
  double calls = 0;    // op calls, the roots' and their children's
  double cpu_us = 0;   // the roots' CPU total
  double kernels = 0, memcpys = 0;
  std::vector<std::string> names;   // distinct, in table order
  std::vector<std::string> copiers;  // the ops that launched a memcpy
  bool found() const { return calls > 0; }
};

Stage stage(const OpsProfile& o, const std::function<bool(const std::string&)>& root) {
  Stage s;
  std::vector<bool> taken(o.ops.size(), false);
  for (std::size_t i = 0; i < o.ops.size(); ++i) {
    const OpProfile& op = o.ops[i];
    if (taken[i] || !root(op.name)) continue;
    s.cpu_us += op.total_us;
    for (const OpProfile* under : op_subtree(o, i)) {
      taken[static_cast<std::size_t>(under - o.ops.data())] = true;
      s.calls += under->calls;
      s.kernels += under->kernels;
      s.memcpys += under->memcpys;
      if (std::find(s.names.begin(), s.names.end(), under->name) == s.names.end()) s.names.push_back(under->name);
      if (under->memcpys > 0 && std::find(s.copiers.begin(), s.copiers.end(), under->name) == s.copiers.end())
        s.copiers.push_back(under->name);
    }
  }
  return s;
}

std::string stage_text(const Stage& s) {
  return fmt::format("{:g} op {} ({}), {:.1f} us CPU", s.calls, s.calls == 1 ? "call" : "calls",
                     fmt::join(s.names, ", "), s.cpu_us);
}

// The other cases of c's problem that have ops.
std::vector<const CaseResult*> siblings(const CaseResult& c, const std::vector<CaseResult>& cases) {
  std::vector<const CaseResult*> out;
  for (const CaseResult& s : cases)
    if (&s != &c && ops_of(s) != nullptr && problem_key(s.problem) == problem_key(c.problem)) out.push_back(&s);
  return out;
}

bool masking_root(const std::string& name) { return name == "aten::masked_fill" || name == "aten::masked_fill_"; }

void masked_fill_ops(const OpsProfile& o, const std::vector<const CaseResult*>& others,
                     std::vector<Finding>& out) {
  const Stage mine = stage(o, masking_root);
  if (!mine.found()) return;
  for (const CaseResult* s : others) {
    const Stage theirs = stage(*ops_of(*s), masking_root);
    if (!theirs.found() || theirs.calls >= mine.calls) continue;
    std::string text = fmt::format("the out-of-place masked fill's extra CPU ops: {}", stage_text(mine));
    if (!mine.copiers.empty())
      text += fmt::format("; the memcpy ({:g} per forward) launched by {}", mine.memcpys, fmt::join(mine.copiers, ", "));
    text += fmt::format(", against the in-place one's ({}): {}", s->backend, stage_text(theirs));
    out.push_back({"masked-fill-ops", text});
    return;
  }
}

void mask_every_call(const OpsProfile& o, std::vector<Finding>& out) {
  const std::vector<OpProfile> by_name = ops_by_name(o);
  const OpProfile* ones = op_named(by_name, "aten::ones");
  const OpProfile* tril = op_named(by_name, "aten::tril");
  if (ones == nullptr || tril == nullptr || ones->calls < 1 || tril->calls < 1) return;
  const Stage s = stage(o, [](const std::string& n) { return n == "aten::ones" || n == "aten::tril"; });
  out.push_back({"mask-ops-every-call",
                 fmt::format("causal mask built on the CPU in every forward: aten::ones {:g} and aten::tril {:g} per "
                             "forward, {:.1f} us CPU, {:g} kernels launched",
                             ones->calls, tril->calls, s.cpu_us, s.kernels)});
}

void safe_softmax_ops(const OpsProfile& o, std::vector<Finding>& out) {
  const Stage s = stage(o, [](const std::string& n) { return n == "aten::_safe_softmax"; });
  if (!s.found()) return;
  out.push_back({"safe-softmax-ops", fmt::format("the safe softmax's CPU ops: {}, {:g} kernels launched",
                                                 stage_text(s), s.kernels)});
}

// Calls of aten::transpose itself (a stage's calls count the as_strided under each too), and the
// CPU time of the transposes with what they call.
double transposes(const OpsProfile& o, double& cpu_us) {
  cpu_us = stage(o, [](const std::string& n) { return n == "aten::transpose"; }).cpu_us;
  const std::vector<OpProfile> by_name = ops_by_name(o);
  const OpProfile* op = op_named(by_name, "aten::transpose");
  return op != nullptr ? op->calls : 0;
}

void flash_transposes(const OpsProfile& o, const std::vector<const CaseResult*>& others, std::vector<Finding>& out) {
  if (!has_op(o, kFlashOp)) return;
  double us = 0;
  const double mine = transposes(o, us);
  const auto cudnn = std::find_if(others.begin(), others.end(),
                                  [](const CaseResult* s) { return has_op(*ops_of(*s), kCudnnOp); });
  double cudnn_us = 0;
  const double theirs = cudnn != others.end() ? transposes(*ops_of(**cudnn), cudnn_us) : 0;
  if (mine == 0 && theirs == 0) return;
  std::string text = fmt::format("transposes in the flash path: {:g} aten::transpose per forward, {:.1f} us CPU", mine, us);
  if (cudnn != others.end())
    text += theirs == 0 ? fmt::format("; cuDNN's path ({}) has none", (*cudnn)->backend)
                        : fmt::format("; cuDNN's path ({}) {:g}, {:.1f} us", (*cudnn)->backend, theirs, cudnn_us);
  out.push_back({"flash-transposes", text});
}

double sdpa_op_us(const OpsProfile& o) {
  const std::vector<OpProfile> by_name = ops_by_name(o);
  const OpProfile* op = op_named(by_name, kSdpaOp);
  return op != nullptr ? op->total_us : 0;
}

void host_cudnn_flash(const CaseResult& c, const OpsProfile& o, const std::vector<const CaseResult*>& others,
                      std::vector<Finding>& out) {
  if (!has_op(o, kCudnnOp) || !c.host || c.host->calls == 0) return;
  const auto flash = std::find_if(others.begin(), others.end(), [](const CaseResult* s) {
    return has_op(*ops_of(*s), kFlashOp) && s->host && s->host->calls > 0;
  });
  if (flash == others.end() || (*flash)->host->per_call_us <= 0) return;
  const double mine = c.host->per_call_us, theirs = (*flash)->host->per_call_us;
  std::string text = fmt::format("host time per call, cuDNN's path against flash's ({}): {:.1f} us against {:.1f} us "
                                 "({:.2f}x)",
                                 (*flash)->backend, mine, theirs, mine / theirs);
  const double traced = sdpa_op_us(o), traced_flash = sdpa_op_us(*ops_of(**flash));
  if (traced > 0 && traced_flash > 0)
    text += fmt::format("; traced, {} takes {:.1f} us against {:.1f} us", kSdpaOp, traced, traced_flash);
  out.push_back({"host-cudnn-flash", text});
}

}  // namespace

std::vector<Finding> op_findings(const CaseResult& c, const std::vector<CaseResult>& cases) {
  std::vector<Finding> out;
  const OpsProfile* o = ops_of(c);
  if (o == nullptr) return out;
  const std::vector<const CaseResult*> others = siblings(c, cases);
  masked_fill_ops(*o, others, out);
  mask_every_call(*o, out);
  safe_softmax_ops(*o, out);
  flash_transposes(*o, others, out);
  host_cudnn_flash(c, *o, others, out);
  return out;
}

void add_op_findings(std::vector<CaseResult>& cases) {
  std::vector<std::vector<Finding>> found;
  for (const CaseResult& c : cases) found.push_back(op_findings(c, cases));
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (cases[i].profile)
      cases[i].profile->findings.insert(cases[i].profile->findings.end(), found[i].begin(), found[i].end());
}

}  // namespace sdpa
