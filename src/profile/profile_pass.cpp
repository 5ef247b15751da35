#include "profile/profile_pass.h"

#include <nvtx3/nvToolsExt.h>

#include <utility>

#include <fmt/format.h>

#include "gpu/check.h"
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

CaseProfile profile_forwards(CuptiSession& session, const std::function<void(cudaStream_t)>& forward,
                             cudaStream_t stream, const std::string& prefix, int forwards,
                             const DeviceInfo& device, ActivityRecords* records) {
  std::vector<ForwardWindow> windows;
  CuptiSession::Pass pass(session);
  for (int i = 0; i < forwards; ++i) {
    ForwardWindow w{fmt::format("{}/fwd{}", prefix, i), session.timestamp(), 0};
    {
      const NvtxRange range(w.name);
      forward(stream);
    }
    w.end = session.timestamp();
    windows.push_back(std::move(w));
    SDPA_CHECK_CUDA(cudaStreamSynchronize(stream));  // forwards apart, so that wall times do not overlap
  }
  ActivityRecords recorded = pass.finish();
  CaseProfile profile = analyze_activity(
      recorded, windows, arch_limits(device.cc_major, device.cc_minor), device.sm_count);
  if (records != nullptr) *records = std::move(recorded);
  return profile;
}

}  // namespace sdpa
