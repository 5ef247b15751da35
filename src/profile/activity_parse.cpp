#include "profile/activity_parse.h"

#include <cstdlib>

namespace sdpa {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
constexpr std::size_t kBufferAlignment = 8;  // CUPTI's requirement for activity buffers

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MARKER,
};

const char* memcpy_kind_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "unknown";
  }
}

const char* launch_type_name(uint8_t type) {
  switch (type) {
    case CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR:
      return "regular";
    case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE:
      return "cooperative";
    case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE:
      return "cooperative multi-device";
    case CUPTI_ACTIVITY_LAUNCH_TYPE_CBL_COMMANDLIST:
      return "command list";
    default:
      return "unknown";
  }
}

template <typename Record>
GpuPlace gpu_place(const Record& r) {
  return GpuPlace{r.deviceId, r.contextId, r.streamId, r.graphId, r.graphNodeId};
}

KernelRecord kernel_record(const CUpti_ActivityKernel10& k) {
  KernelRecord r;
  r.name = k.name != nullptr ? k.name : "";
  r.start = k.start;
  r.end = k.end;
  r.correlation = k.correlationId;
  r.place = gpu_place(k);
  r.grid = Dim3{k.gridX, k.gridY, k.gridZ};
  r.block = Dim3{k.blockX, k.blockY, k.blockZ};
  // CUPTI reports 0x0x0 for a launch without clusters: a cluster of one block.
  const auto cluster_dim = [](uint32_t d) { return d == 0 ? 1 : static_cast<int>(d); };
  r.cluster = Dim3{cluster_dim(k.clusterX), cluster_dim(k.clusterY), cluster_dim(k.clusterZ)};
  r.registers_per_thread = k.registersPerThread;
  r.static_shared = k.staticSharedMemory;
  r.dynamic_shared = k.dynamicSharedMemory;
  r.shared_config = static_cast<int>(k.sharedMemoryExecuted);
  r.launch_type = launch_type_name(k.launchType);
  return r;
}

MemcpyRecord memcpy_record(const CUpti_ActivityMemcpy6& m) {
  return MemcpyRecord{
      memcpy_kind_name(m.copyKind), m.bytes, m.start, m.end, m.correlationId, gpu_place(m)};
}

MemsetRecord memset_record(const CUpti_ActivityMemset4& m) {
  return MemsetRecord{m.bytes, m.start, m.end, m.correlationId, gpu_place(m)};
}

MarkerRecord marker_record(const CUpti_ActivityMarker2& m) {
  MarkerRecord r;
  r.id = m.id;
  r.timestamp = m.timestamp;
  r.is_start = (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0;
  r.name = m.name != nullptr ? m.name : "";
  r.domain = m.domain != nullptr ? m.domain : "";
  if (m.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS ||
      m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) {
    r.process_id = m.objectId.pt.processId;
    r.thread_id = m.objectId.pt.threadId;
  }
  return r;
}

}  // namespace

uint8_t* allocate_activity_buffer(std::size_t& size) {
  auto* buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  size = buffer != nullptr ? kBufferBytes : 0;
  return buffer;
}

CUptiResult enable_recorded_kinds(const CuptiApi& api) {
  for (std::size_t enabled = 0; enabled < std::size(kKinds); ++enabled) {
    if (const CUptiResult r = api.cuptiActivityEnable(kKinds[enabled]); r != CUPTI_SUCCESS) {
      // Best effort: the failure to enable is the error worth reporting.
      for (std::size_t i = 0; i < enabled; ++i)
        static_cast<void>(api.cuptiActivityDisable(kKinds[i]));
      return r;
    }
  }
  return CUPTI_SUCCESS;
}

CUptiResult disable_recorded_kinds(const CuptiApi& api) {
  CUptiResult first = CUPTI_SUCCESS;
  for (const CUpti_ActivityKind kind : kKinds)
    if (const CUptiResult r = api.cuptiActivityDisable(kind);
        r != CUPTI_SUCCESS && first == CUPTI_SUCCESS)
      first = r;
  return first;
}

CUptiResult ActivityParser::parse(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                  std::size_t valid_size, ActivityRecords& out) {
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult next = api_.cuptiActivityGetNextRecord(buffer, valid_size, &record);
    if (next == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (next != CUPTI_SUCCESS) return next;
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        out.kernels.push_back(
            kernel_record(*reinterpret_cast<const CUpti_ActivityKernel10*>(record)));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        out.memcpys.push_back(
            memcpy_record(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record)));
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        out.memsets.push_back(
            memset_record(*reinterpret_cast<const CUpti_ActivityMemset4*>(record)));
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
        out.api_calls.push_back(api_record(*reinterpret_cast<const CUpti_ActivityAPI*>(record)));
        break;
      case CUPTI_ACTIVITY_KIND_MARKER: {
        const auto& m = *reinterpret_cast<const CUpti_ActivityMarker2*>(record);
        if ((m.flags & (CUPTI_ACTIVITY_FLAG_MARKER_START | CUPTI_ACTIVITY_FLAG_MARKER_END)) != 0)
          out.markers.push_back(marker_record(m));
        break;
      }
      default:
        break;
    }
  }
  std::size_t dropped = 0;
  if (const CUptiResult r = api_.cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped);
      r != CUPTI_SUCCESS)
    return r;
  out.dropped += dropped;
  return CUPTI_SUCCESS;
}

ApiRecord ActivityParser::api_record(const CUpti_ActivityAPI& a) {
  ApiRecord r;
  r.start = a.start;
  r.end = a.end;
  r.correlation = a.correlationId;
  r.kind = a.kind == CUPTI_ACTIVITY_KIND_DRIVER ? ApiKind::driver : ApiKind::runtime;
  r.callback_id = a.cbid;
  r.process_id = a.processId;
  r.thread_id = a.threadId;
  const auto key = std::make_pair(r.kind, r.callback_id);
  auto name = callback_names_.find(key);
  if (name == callback_names_.end()) {
    const CUpti_CallbackDomain domain =
        r.kind == ApiKind::driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    name = callback_names_.emplace(key, cupti_callback_name(api_, domain, r.callback_id)).first;
  }
  r.name = name->second;
  return r;
}

}  // namespace sdpa
