// The launches of an elementwise op split past int32 byte offsets, as PyTorch's TensorIterator
// splits them (kernels/int32_pieces.h). No GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "int32_pieces.h"

namespace sdpa {

// gtest's printer for a failure's pieces (found by argument-dependent lookup, so not in the
// anonymous namespace).
void PrintTo(const Int32Piece& p, std::ostream* os) {
  *os << "{" << p.begin << ", " << p.count << "}";
}

namespace {

constexpr int64_t kTwo30 = int64_t{1} << 30;
constexpr int64_t kTwo31 = int64_t{1} << 31;

std::vector<Int32Piece> equal_pieces(int64_t pieces, int64_t count) {
  std::vector<Int32Piece> out;
  for (int64_t i = 0; i < pieces; ++i) out.push_back({i * count, count});
  return out;
}

// The pieces cover [0, n) in order, each within int32 offsets.
void expect_covers(const std::vector<Int32Piece>& pieces, int64_t n, int64_t elem_bytes) {
  int64_t next = 0;
  for (const Int32Piece& p : pieces) {
    EXPECT_EQ(p.begin, next);
    EXPECT_GT(p.count, 0);
    EXPECT_TRUE(fits_int32_offsets(p.count, elem_bytes)) << p.count;
    next = p.begin + p.count;
  }
  EXPECT_EQ(next, n);
}

TEST(Int32Pieces, TheBoundIsTheLargestByteOffset) {
  EXPECT_TRUE(fits_int32_offsets(kTwo30, 2));  // 1 + (2^30 - 1) * 2 = INT32_MAX
  EXPECT_FALSE(fits_int32_offsets(kTwo30 + 1, 2));
  EXPECT_TRUE(fits_int32_offsets(kTwo30 / 2, 4));
  EXPECT_FALSE(fits_int32_offsets(kTwo30 / 2 + 1, 4));
  EXPECT_TRUE(fits_int32_offsets(kTwo31 - 1, 1));
  EXPECT_FALSE(fits_int32_offsets(kTwo31, 1));
}

// What PyTorch launched over the score matrix at B8 H16 S4096 (2^31 elements) on an H100.
TEST(Int32Pieces, Bf16Over2To31ElementsIsTwoHalves) {
  EXPECT_EQ(int32_pieces(kTwo31, 2), equal_pieces(2, kTwo30));
}

TEST(Int32Pieces, Fp32Over2To31ElementsIsFourQuarters) {
  EXPECT_EQ(int32_pieces(kTwo31, 4), equal_pieces(4, kTwo30 / 2));
}

TEST(Int32Pieces, WhatFitsIsOneLaunch) {
  EXPECT_EQ(int32_pieces(kTwo30, 2), equal_pieces(1, kTwo30));
  EXPECT_EQ(int32_pieces(kTwo30 / 2, 4), equal_pieces(1, kTwo30 / 2));
  EXPECT_EQ(int32_pieces(kTwo31 - 1, 1), equal_pieces(1, kTwo31 - 1));
  EXPECT_EQ(int32_pieces(1000, 4), equal_pieces(1, 1000));
  EXPECT_EQ(int32_pieces(kTwo30 + 1, 2).size(), 2u);
  EXPECT_EQ(int32_pieces(kTwo31, 1).size(), 2u);
}

TEST(Int32Pieces, EmptyIsNoLaunchAndOneElementIsOne) {
  EXPECT_TRUE(int32_pieces(0, 4).empty());
  EXPECT_TRUE(int32_pieces(0, 2, 16).empty());
  EXPECT_EQ(int32_pieces(1, 4), equal_pieces(1, 1));
}

// Every split's first piece is the half rounded down: 3 * 2^30 + 1 splits into 3 * 2^29 and
// 3 * 2^29 + 1, each of those again.
TEST(Int32Pieces, OddCountsSplitTheHalfRoundedDownFirst) {
  const int64_t n = 3 * kTwo30 + 1;
  const int64_t q = 3 * (kTwo30 / 4);
  const std::vector<Int32Piece> expected = {{0, q}, {q, q}, {2 * q, q}, {3 * q, q + 1}};
  EXPECT_EQ(int32_pieces(n, 2), expected);
  for (const int64_t odd : {kTwo31 + 17, 3 * kTwo30 + 1, 5 * kTwo31 + 12345, kTwo31 * 4 - 1}) {
    SCOPED_TRACE(odd);
    for (const int64_t bytes : {1, 2, 4}) expect_covers(int32_pieces(odd, bytes), odd, bytes);
  }
  EXPECT_EQ(int32_pieces(kTwo31 + 17, 1),
            (std::vector<Int32Piece>{{0, kTwo30 + 8}, {kTwo30 + 8, kTwo30 + 9}}));
}

// masked_fill over [slices, mask_elems], the mask broadcast over the slices: whole slices first.
TEST(Int32Pieces, ABroadcastMaskSplitsTheSlicesFirst) {
  // B8 H16 S4096: 128 slices of 2^24, as the contiguous split.
  EXPECT_EQ(int32_pieces(kTwo31, 2, int64_t{1} << 24), equal_pieces(2, kTwo30));
  EXPECT_EQ(int32_pieces(kTwo31, 4, int64_t{1} << 24), equal_pieces(4, kTwo30 / 2));
  // 3 slices of 400M bf16: 1 slice, then 2 (the contiguous halves would be 600M each).
  const int64_t slice = 400'000'000;
  EXPECT_EQ(int32_pieces(3 * slice, 2, slice),
            (std::vector<Int32Piece>{{0, slice}, {slice, 2 * slice}}));
  EXPECT_EQ(int32_pieces(3 * slice, 2).size(), 2u);
  EXPECT_EQ(int32_pieces(3 * slice, 2)[0].count, 3 * slice / 2);
  // where_rows's condition is broadcast along a row in the same way: rows first.
  EXPECT_EQ(int32_pieces(kTwo31, 4, 4096), equal_pieces(4, kTwo30 / 2));
}

// A slice too large alone is then halved within: no piece crosses a slice's end.
TEST(Int32Pieces, ASliceTooLargeAloneIsHalvedWithin) {
  const int64_t slice = kTwo30 + 6;  // bf16: past int32 offsets by itself
  EXPECT_EQ(int32_pieces(3 * slice, 2, slice), equal_pieces(6, slice / 2));
  // The contiguous split of the same count crosses the slices.
  EXPECT_NE(int32_pieces(3 * slice, 2), equal_pieces(6, slice / 2));
  expect_covers(int32_pieces(3 * slice, 2), 3 * slice, 2);
  // One slice: the contiguous split.
  EXPECT_EQ(int32_pieces(slice, 2, slice), int32_pieces(slice, 2));
}

}  // namespace
}  // namespace sdpa
