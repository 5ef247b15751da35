#include "profile/launch_findings.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "model/case_key.h"

namespace sdpa {
namespace {

// Timed, with a host time per call.
bool measured(const CaseResult& c) {
  return c.status == CaseStatus::ok && c.timing && c.host && c.host->calls > 0 &&
         c.host->per_call_us > 0;
}

// The case of c's backend and problem launched the other way, measured; nullptr when none is.
const CaseResult* other_launch(const CaseResult& c, const std::vector<CaseResult>& cases) {
  Problem other = c.problem;
  other.launch = c.problem.launch == LaunchMode::graph ? LaunchMode::eager : LaunchMode::graph;
  const CaseKey key = case_key(c.backend, other);
  for (const CaseResult& s : cases)
    if (measured(s) && case_key(s.backend, s.problem) == key) return &s;
  return nullptr;
}

std::string launches_text(const CaseResult& c) {
  if (!c.profile || c.profile->forwards.empty()) return "";
  const double launches = c.profile->kernels_per_forward() + c.profile->memcpys_per_forward() +
                          c.profile->memsets_per_forward();
  return fmt::format(" for {:g} launch{}", launches, launches == 1 ? "" : "es");
}

}  // namespace

std::vector<Finding> launch_findings(const CaseResult& c, const std::vector<CaseResult>& cases) {
  std::vector<Finding> out;
  if (!measured(c)) return out;
  const double host_us = c.host->per_call_us;
  const double gpu_us = 1e3 * c.timing->median_ms;
  const CaseResult* other = other_launch(c, cases);
  if (c.problem.launch == LaunchMode::eager) {
    if (host_us <= gpu_us) return out;
    out.push_back(
        {"launch-bound",
         fmt::format(
             "launch-bound: {:.1f} us of CPU per call{} against {:.1f} us of GPU time (median): "
             "called back to back, the CPU sets the pace{}",
             host_us, launches_text(c), gpu_us,
             other != nullptr
                 ? fmt::format("; as a CUDA graph {:.1f} us per call", other->host->per_call_us)
                 : std::string())});
    return out;
  }
  if (other == nullptr) return out;
  const double eager_host = other->host->per_call_us;
  const double eager_gpu = 1e3 * other->timing->median_ms;
  out.push_back(
      {"graph-launch",
       fmt::format("CUDA graph: {:.1f} us of CPU per call (one cudaGraphLaunch) against {:.1f} us "
                   "eager{} ({:.1f}x); GPU time {:.1f} us against {:.1f} us eager ({:+.1f}%)",
                   host_us, eager_host, launches_text(*other), eager_host / host_us, gpu_us,
                   eager_gpu, 100 * (gpu_us / eager_gpu - 1))});
  return out;
}

void add_launch_findings(std::vector<CaseResult>& cases) {
  std::vector<std::vector<Finding>> found;
  for (const CaseResult& c : cases) found.push_back(launch_findings(c, cases));
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (!cases[i].profile) continue;
    // Once per case: `run --with-torch` adds them again over the traced cases and its own.
    std::vector<Finding>& findings = cases[i].profile->findings;
    std::erase_if(findings, [](const Finding& f) {
      return f.rule == "launch-bound" || f.rule == "graph-launch";
    });
    findings.insert(findings.end(), found[i].begin(), found[i].end());
  }
}

}  // namespace sdpa
