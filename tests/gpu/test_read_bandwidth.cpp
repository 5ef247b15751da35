// The read ceiling's kernel reads every byte it is given once: the XOR of its blocks' words is the
// XOR of the buffer's, at sizes that leave a partial tile, with 4 and 8 loads in flight.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "gpu/check.h"
#include "gpu/device_buffer.h"
#include "gpu/device_query.h"
#include "read_bandwidth.h"

namespace sdpa {
namespace {

TEST(ReadBandwidth, ReadsEveryWordOnce) {
  DeviceInfo device;
  std::string error;
  ASSERT_TRUE(query_device(0, device, error)) << error;
  std::mt19937 random(std::random_device{}());
  for (const int loads : {4, 8}) {
    for (const std::size_t words : {std::size_t{4}, std::size_t{4 * 1000 + 4}, std::size_t{1} << 24,
                                    (std::size_t{1} << 24) + 4 * 4099}) {
      SCOPED_TRACE(testing::Message() << words << " words, " << loads << " loads in flight");
      std::vector<uint32_t> host(words);
      uint32_t expected = 0;
      for (uint32_t& w : host) expected ^= (w = static_cast<uint32_t>(random()));
      DeviceBuffer src(words * sizeof(uint32_t));
      SDPA_CHECK_CUDA(cudaMemcpy(src.get(), host.data(), src.bytes(), cudaMemcpyHostToDevice));
      const int blocks = 4 * device.sm_count;
      DeviceBuffer sink(static_cast<std::size_t>(blocks) * sizeof(uint32_t));
      SDPA_CHECK_CUDA(cudaMemset(sink.get(), 0, sink.bytes()));
      SDPA_CHECK_CUDA(launch_read_bandwidth(src.get(), src.bytes(), sink.as<uint32_t>(), blocks,
                                            loads, nullptr));
      std::vector<uint32_t> sunk(static_cast<std::size_t>(blocks));
      SDPA_CHECK_CUDA(cudaMemcpy(sunk.data(), sink.get(), sink.bytes(), cudaMemcpyDeviceToHost));
      uint32_t got = 0;
      for (const uint32_t w : sunk) got ^= w;
      EXPECT_EQ(got, expected);
    }
  }
  DeviceBuffer odd(20);
  DeviceBuffer sink(sizeof(uint32_t));
  EXPECT_EQ(launch_read_bandwidth(odd.get(), 20, sink.as<uint32_t>(), 1, 4, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(launch_read_bandwidth(odd.get(), 16, sink.as<uint32_t>(), 1, 5, nullptr),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace sdpa
