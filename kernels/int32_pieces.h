// The launches one elementwise op takes in PyTorch. Its TensorIterator kernels index operands by
// 32-bit byte offsets: where an operand's largest offset, 1 + sum over dims of (size - 1) *
// stride_bytes, passes INT32_MAX (TensorIteratorBase::can_use_32bit_indexing), the iteration is
// split (with_32bit_indexing): the dimension of the largest extent is halved, the first piece
// size / 2 and the second size - size / 2, recursively, and each piece is a launch of its own. Our
// unfused backends mirror PyTorch's kernels, so their elementwise ops split the same way: their
// kernel counts are PyTorch's. Host code, no CUDA.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace sdpa {

struct Int32Piece {
  int64_t begin = 0;  // the piece's first element
  int64_t count = 0;
  bool operator==(const Int32Piece&) const = default;
};

// Whether `count` contiguous elements of `elem_bytes` each keep every byte offset within int32.
inline bool fits_int32_offsets(int64_t count, int64_t elem_bytes) {
  return 1 + (count - 1) * elem_bytes <= std::numeric_limits<int32_t>::max();
}

namespace detail {
inline void split_int32_pieces(int64_t begin, int64_t count, int64_t elem_bytes, int64_t slice,
                               std::vector<Int32Piece>& pieces) {
  if (fits_int32_offsets(count, elem_bytes)) {
    pieces.push_back({begin, count});
    return;
  }
  const int64_t first = count > slice ? count / slice / 2 * slice : count / 2;
  split_int32_pieces(begin, first, elem_bytes, slice, pieces);
  split_int32_pieces(begin + first, count - first, elem_bytes, slice, pieces);
}
}  // namespace detail

// The pieces of an op over `n` elements, in order; `elem_bytes` is the largest element size among
// its operands. Contiguous operands coalesce into one dimension: the pieces are its halves, and
// theirs. With `slice` > 1 the elements are [n / slice, slice] (n a multiple of `slice`) and an
// operand is broadcast over the slices (a mask): that dimension does not coalesce with the slice's,
// and as the larger extent it is halved first, in whole slices; a lone slice still too large is
// then halved within. n == 0: no piece (PyTorch launches nothing for an empty tensor).
inline std::vector<Int32Piece> int32_pieces(int64_t n, int64_t elem_bytes, int64_t slice = 1) {
  std::vector<Int32Piece> pieces;
  if (n > 0) detail::split_int32_pieces(0, n, elem_bytes, slice < 1 ? 1 : slice, pieces);
  return pieces;
}

}  // namespace sdpa
