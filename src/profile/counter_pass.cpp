#include "profile/counter_pass.h"

#include "model/errors.h"
#include "profile/findings.h"

namespace sdpa {

void count_forward(CounterSession& session, CaseProfile& profile,
                   const std::function<void(cudaStream_t)>& forward,
                   const std::function<void(cudaStream_t)>& before_pass, cudaStream_t stream,
                   const Problem& problem, int sm_count,
                   std::optional<double> expected_dram_bytes) {
  CounterSession::Readout readout;
  try {
    readout = session.measure(forward, before_pass, stream, profile.launch_order.size());
  } catch (const ApiError& e) {
    profile.counters_skipped = e.what();
    return;
  }
  if (std::string why = attach_counters(profile, session.metrics(), readout.ranges); !why.empty()) {
    profile.counters_skipped = std::move(why);
    return;
  }
  CounterSource source = session.source();
  source.wall_ms = readout.wall_ms;
  source.expected_dram_bytes = expected_dram_bytes;
  profile.counters = std::move(source);
  for (Finding& f : counter_findings(profile, problem, sm_count))
    profile.findings.push_back(std::move(f));
}

}  // namespace sdpa
