#include "profile/profile_pass.h"

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "gpu/check.h"
#include "profile/findings.h"
#include "profile/profile_analysis.h"

namespace sdpa {
namespace {

class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace

std::string nvtx_range_prefix(const std::string& backend, const Problem& p) {
  std::string shape = p.shape_label();
  std::replace(shape.begin(), shape.end(), ' ', '_');
  return fmt::format("sdpa-prof/{}/{}_{}{}", backend, shape, dtype_name(p.dtype), p.causal ? "_causal" : "");
}

CaseProfile profile_forwards(CuptiSession& session, const std::function<void(cudaStream_t)>& forward,
                             cudaStream_t stream, const std::string& range_prefix, int forwards,
                             const DeviceInfo& device, ActivityRecords* records) {
  std::vector<ForwardWindow> windows;
  CuptiSession::Pass pass(session);
  for (int i = 0; i < forwards; ++i) {
    ForwardWindow w{fmt::format("{}/fwd{}", range_prefix, i), session.timestamp(), 0};
    {
      const NvtxRange range(w.name);
      forward(stream);
    }
    w.end = session.timestamp();
    windows.push_back(std::move(w));
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));  // forwards apart, so that wall times do not overlap
  }
  ActivityRecords recorded = pass.finish();
  CaseProfile profile = analyze_activity(recorded, windows, arch_limits(device.cc_major, device.cc_minor), device.sm_count);
  profile.findings = profile_findings(profile);
  if (records != nullptr) *records = std::move(recorded);
  return profile;
}

}  // namespace sdpa
