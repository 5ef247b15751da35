// GPU tests exit with 77 (CTest's skip code) when no usable GPU is present.
#include <gtest/gtest.h>

#include <iostream>

#include "gpu/device_query.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  sdpa::DeviceInfo device;
  std::string error;
  if (!sdpa::query_device(0, device, error)) {
    std::cout << "skipping GPU tests: " << error << "\n";
    return 77;
  }
  std::cout << "GPU: " << device.name << "\n";
  return RUN_ALL_TESTS();
}
