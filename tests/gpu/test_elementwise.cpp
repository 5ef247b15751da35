// Elementwise launchers just past int32 byte offsets, where they split into pieces as PyTorch's
// TensorIterator does (kernels/int32_pieces.h): every element written, once, and an operand
// broadcast over slices or rows followed from each piece's place in the whole tensor. Each test
// holds under 5 GiB of device memory, and as much on the host for the check of every element.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "elementwise.h"
#include "gpu/check.h"
#include "gpu/device_buffer.h"
#include "int32_pieces.h"

namespace sdpa {
namespace {

// Skips a test the device has no room for.
#define SDPA_REQUIRE_DEVICE_BYTES(bytes)                                                          \
  do {                                                                                            \
    std::size_t free_ = 0, total_ = 0;                                                            \
    SDPA_CHECK_CUDA(cudaMemGetInfo(&free_, &total_));                                             \
    if (free_ < (bytes) + (std::size_t{256} << 20))                                               \
      GTEST_SKIP() << "needs " << (bytes) << " bytes of device memory, " << free_ << " are free"; \
  } while (0)

template <typename T>
std::vector<T> copy_to_host(const DeviceBuffer& src, int64_t n) {
  std::vector<T> host(static_cast<std::size_t>(n));
  SDPA_CHECK_CUDA(
      cudaMemcpy(host.data(), src.get(), host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// The index of the first element that is not `expected`, or -1.
template <typename T>
int64_t first_other(std::span<const T> v, T expected) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != expected) return static_cast<int64_t>(i);
  return -1;
}

// 2^31 + 17 bools: two pieces, 2^30 + 8 and 2^30 + 9. fill_bool must set what was false, and
// where(mask, 0, -inf) over the first 2^29 + 5 of them (fp32 out: 2 pieces) follow each.
TEST(ElementwisePieces, FillAndWherePastInt32WriteEveryElement) {
  const int64_t n = (int64_t{1} << 31) + 17;
  ASSERT_EQ(int32_pieces(n, 1).size(), 2u);
  const auto bytes = static_cast<std::size_t>(n);
  SDPA_REQUIRE_DEVICE_BYTES(2 * bytes);
  CudaStream stream;
  const cudaStream_t s = stream.get();
  const int64_t m = (int64_t{1} << 29) + 5;
  ASSERT_EQ(int32_pieces(m, sizeof(float)).size(), 2u);
  DeviceBuffer in(bytes), out(static_cast<std::size_t>(m) * sizeof(float)), scalars(2 * sizeof(float));
  SDPA_CHECK_CUDA(cudaMemsetAsync(in.get(), 0, bytes, s));
  SDPA_CHECK_CUDA(cudaMemsetAsync(out.get(), 0x7f, out.bytes(), s));
  SDPA_CHECK_CUDA(launch_fill_float(scalars.as<float>(), 1, 0.f, s));
  SDPA_CHECK_CUDA(launch_fill_float(scalars.as<float>() + 1, 1, -1.f, s));
  SDPA_CHECK_CUDA(launch_fill_bool(in.as<bool>(), n, true, s));
  SDPA_CHECK_CUDA(launch_where_scalar_float(in.as<bool>(), out.as<float>(), m, scalars.as<float>(),
                                            scalars.as<float>() + 1, s));
  SDPA_CHECK_CUDA(cudaStreamSynchronize(s));
  EXPECT_EQ(first_other<uint8_t>(copy_to_host<uint8_t>(in, n), 1), -1);
  EXPECT_EQ(first_other<float>(copy_to_host<float>(out, m), 0.f), -1);
}

// 2^29 + 5 floats (two pieces): isneginf marks -inf alone, in both pieces, and not +inf or NaN.
TEST(ElementwisePieces, IsNegInfPastInt32MarksOnlyMinusInfinity) {
  const int64_t n = (int64_t{1} << 29) + 5;
  ASSERT_EQ(int32_pieces(n, sizeof(float)).size(), 2u);
  const auto bytes = static_cast<std::size_t>(n) * (sizeof(float) + 1);
  SDPA_REQUIRE_DEVICE_BYTES(bytes);
  DeviceBuffer in(static_cast<std::size_t>(n) * sizeof(float)), out(static_cast<std::size_t>(n));
  SDPA_CHECK_CUDA(cudaMemset(in.get(), 0, in.bytes()));
  SDPA_CHECK_CUDA(cudaMemset(out.get(), 1, out.bytes()));
  const int64_t minus_inf[] = {0, (int64_t{1} << 28) + 3, n - 1};
  const float inf = INFINITY, minus = -INFINITY, nan = std::nanf("");
  for (int64_t i : minus_inf)
    SDPA_CHECK_CUDA(cudaMemcpy(in.as<float>() + i, &minus, sizeof(float), cudaMemcpyHostToDevice));
  SDPA_CHECK_CUDA(cudaMemcpy(in.as<float>() + 1, &inf, sizeof(float), cudaMemcpyHostToDevice));
  SDPA_CHECK_CUDA(cudaMemcpy(in.as<float>() + 2, &nan, sizeof(float), cudaMemcpyHostToDevice));
  SDPA_CHECK_CUDA(launch_isneginf_float(in.as<float>(), out.as<bool>(), n, nullptr));
  SDPA_CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<uint8_t> marks = copy_to_host<uint8_t>(out, n);
  for (int64_t i : minus_inf) {
    EXPECT_EQ(marks[static_cast<std::size_t>(i)], 1) << "at " << i;
    marks[static_cast<std::size_t>(i)] = 0;
  }
  EXPECT_EQ(first_other<uint8_t>(marks, 0), -1);
}

struct MaskedFillCase {
  int64_t rows, cols, slices;  // the mask is [rows, cols], the data [slices, rows * cols]
};

class MaskedFillPieces : public ::testing::TestWithParam<MaskedFillCase> {};

// bf16 data of zeros, filled with 1 where a causal mask (c > r) is set.
TEST_P(MaskedFillPieces, FollowTheBroadcastMask) {
  const auto [rows, cols, slices] = GetParam();
  const int64_t mask_elems = rows * cols;
  const int64_t n = slices * mask_elems;
  ASSERT_EQ(int32_pieces(n, 2, mask_elems).size(), 2u);
  SDPA_REQUIRE_DEVICE_BYTES(static_cast<std::size_t>(3 * n));
  CudaStream stream;
  const cudaStream_t s = stream.get();
  DeviceBuffer data(static_cast<std::size_t>(n) * 2), mask(static_cast<std::size_t>(mask_elems));
  SDPA_CHECK_CUDA(cudaMemsetAsync(data.get(), 0, data.bytes(), s));
  SDPA_CHECK_CUDA(launch_causal_mask(mask.as<bool>(), rows, cols, s));
  SDPA_CHECK_CUDA(
      launch_masked_fill(DType::bf16, data.get(), mask.as<bool>(), n, mask_elems, 1.f, s));
  SDPA_CHECK_CUDA(cudaStreamSynchronize(s));
  const auto host = copy_to_host<uint16_t>(data, n);
  constexpr uint16_t kOne = 0x3F80;  // bf16 1.0
  int64_t wrong = 0, first_wrong = -1;
  for (int64_t i = 0, slice = 0; slice < slices; ++slice)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c, ++i)
        if (host[static_cast<std::size_t>(i)] != (c > r ? kOne : 0)) {
          if (first_wrong < 0) first_wrong = i;
          ++wrong;
        }
  EXPECT_EQ(wrong, 0) << "first at element " << first_wrong;
}

INSTANTIATE_TEST_SUITE_P(
    PastInt32, MaskedFillPieces,
    ::testing::Values(
        // 3 slices of 4*10^8 (16-byte packs): 1 slice, then 2.
        MaskedFillCase{20000, 20000, 3},
        // One odd slice past int32 alone: halved within, the second half's data not 16-byte
        // aligned and its mask read from the middle of the slice.
        MaskedFillCase{32769, 32771, 1}));

// Three rows of 2 * 10^8 + 1 floats, in place as the math backend's where can run: the rows split
// 1, then 2; each piece's condition is its rows'.
TEST(ElementwisePieces, WhereRowsPastInt32FollowsEachRowsCondition) {
  constexpr int64_t rows = 3, cols = 200'000'001, n = rows * cols;
  ASSERT_EQ(int32_pieces(n, 4, cols).size(), 2u);
  SDPA_REQUIRE_DEVICE_BYTES(static_cast<std::size_t>(n) * sizeof(float));
  CudaStream stream;
  const cudaStream_t s = stream.get();
  DeviceBuffer data(static_cast<std::size_t>(n) * sizeof(float)), scalar(sizeof(float));
  DeviceBuffer row_cond(static_cast<std::size_t>(rows));
  const bool cond[rows] = {false, true, false};
  SDPA_CHECK_CUDA(cudaMemcpyAsync(row_cond.get(), cond, sizeof(cond), cudaMemcpyHostToDevice, s));
  SDPA_CHECK_CUDA(launch_fill_float(scalar.as<float>(), 1, 0.f, s));
  SDPA_CHECK_CUDA(launch_fill_float(data.as<float>(), n, 2.f, s));
  SDPA_CHECK_CUDA(launch_where_rows_float(row_cond.as<bool>(), scalar.as<float>(), data.as<float>(),
                                          data.as<float>(), rows, cols, s));
  SDPA_CHECK_CUDA(cudaStreamSynchronize(s));
  const auto host = copy_to_host<float>(data, n);
  for (int64_t r = 0; r < rows; ++r) {
    const std::span<const float> row(host.data() + r * cols, static_cast<std::size_t>(cols));
    EXPECT_EQ(first_other(row, cond[r] ? 0.f : 2.f), -1) << "row " << r;
  }
}

}  // namespace
}  // namespace sdpa
