// A stand-in libcudnn.so.9 for the unit tests (fake_cudnn.cpp): it keeps every backend descriptor
// the graph builder creates, with the attributes set on it, and finalizes anything, so that a
// graph's structure is checked without a GPU or cuDNN. A descriptor handle it returns points at
// its Record.
#pragma once

#include <cudnn_graph.h>

#include <cstdint>
#include <map>
#include <vector>

namespace sdpa::fake_cudnn {

// The version the stand-in reports.
inline constexpr std::size_t kVersion = 91900;

struct Attribute {
  cudnnBackendAttributeType_t type{};
  int64_t count = 0;
  std::vector<unsigned char> bytes;  // count elements of `type`, as set
};

struct Record {
  cudnnBackendDescriptorType_t type{};
  std::map<cudnnBackendAttributeName_t, Attribute> attributes;
  bool finalized = false;
};

inline const Record& record(cudnnBackendDescriptor_t descriptor) {
  return *static_cast<const Record*>(descriptor);
}

}  // namespace sdpa::fake_cudnn
