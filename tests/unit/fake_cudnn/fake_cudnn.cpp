// The stand-in libcudnn.so.9 (fake_cudnn.h): the twelve entry points sdpa-prof loads.
#include "fake_cudnn.h"

#include <cstring>

namespace {

using sdpa::fake_cudnn::Record;

// The size of one element of `type`; 0 for a type the graph builder does not set.
std::size_t element_bytes(cudnnBackendAttributeType_t type) {
  switch (type) {
    case CUDNN_TYPE_INT64:
    case CUDNN_TYPE_HANDLE:
    case CUDNN_TYPE_BACKEND_DESCRIPTOR:
    case CUDNN_TYPE_VOID_PTR:
      return 8;
    case CUDNN_TYPE_BOOLEAN:
      return sizeof(bool);
    case CUDNN_TYPE_DATA_TYPE:
    case CUDNN_TYPE_POINTWISE_MODE:
    case CUDNN_TYPE_REDUCTION_OPERATOR_TYPE:
    case CUDNN_TYPE_HEUR_MODE:
      return 4;
    default:
      return 0;
  }
}

char handle_object;  // what cudnnCreate hands out

}  // namespace

extern "C" {

size_t cudnnGetVersion(void) {
  return sdpa::fake_cudnn::kVersion;
}

const char* cudnnGetErrorString(cudnnStatus_t) {
  return "fake cuDNN status";
}

void cudnnGetLastErrorString(char* message, size_t max_size) {
  if (max_size > 0) message[0] = '\0';
}

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  *handle = reinterpret_cast<cudnnHandle_t>(&handle_object);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t) {
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t, cudaStream_t) {
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                           cudnnBackendDescriptor_t* descriptor) {
  *descriptor = new Record{type, {}, false};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
  delete static_cast<Record*>(descriptor);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                       cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count,
                                       const void* values) {
  const std::size_t bytes = element_bytes(type) * static_cast<std::size_t>(count);
  if (element_bytes(type) == 0 || count < 0) return CUDNN_STATUS_NOT_SUPPORTED;
  auto& attribute = static_cast<Record*>(descriptor)->attributes[name];
  attribute.type = type;
  attribute.count = count;
  attribute.bytes.resize(bytes);
  if (bytes > 0) std::memcpy(attribute.bytes.data(), values, bytes);
  return CUDNN_STATUS_SUCCESS;
}

// Nothing the graph builder reads back: heuristics, engines and plans are the GPU tests' part.
cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const, cudnnBackendAttributeName_t,
                                       cudnnBackendAttributeType_t, int64_t, int64_t*, void*) {
  return CUDNN_STATUS_NOT_SUPPORTED;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  static_cast<Record*>(descriptor)->finalized = true;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t, cudnnBackendDescriptor_t,
                                  cudnnBackendDescriptor_t) {
  return CUDNN_STATUS_NOT_SUPPORTED;
}

}  // extern "C"
