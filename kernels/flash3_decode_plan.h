// What a launch of flash3's decode kernel is made of, in host code the unit tests read: when the
// backend takes it (the dispatch rule), its tile sizes, how many ways each sequence's keys split
// (the split heuristic), the workspace of the split parts, and where a key's row lies in a
// contiguous or a paged K/V cache. flash3_decode_kernel.cuh has the device side.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "attention_shape.h"
#include "paged_kv.h"

namespace sdpa::flash3 {

// The dispatch rule: queries this short go to the decode kernel, longer ones to the prefill
// kernel, whose 64-128-row tiles they would leave mostly empty.
inline constexpr int64_t kDecodeMaxSeqQ = 16;
inline bool uses_decode_kernel(const AttentionShape& s) {
  return s.seq_q <= kDecodeMaxSeqQ;
}

// Tile sizes shared by both head dims: a key block of 64 keys a pipeline stage, 16 of them for
// each of the 4 warps (a warp owns its keys' scores and softmax and a partial O of every row).
inline constexpr int kDecodeBlockN = 64;
inline constexpr int kDecodeWarps = 4;
inline constexpr int kDecodeThreads = 32 * kDecodeWarps;
inline constexpr int kDecodeMaxRows = 32;  // packed query rows of one CTA: two m16 tiles

// A split keeps at least this many key blocks (its prologue and its combine against its loads),
// and a sequence splits at most this many ways (the combine reads every split's part).
inline constexpr int kDecodeMinSplitBlocks = 4;
inline constexpr int kDecodeMaxSplits = 128;
// When a split may put a second CTA on an SM that the unsplit CTAs would leave to one: its splits
// at least `min_split_blocks` long, its sequence at least `min_blocks`.
struct DecodeStacking {
  int64_t min_split_blocks;
  int64_t min_blocks;
};
// A contiguous cache (or pages of whole blocks). A stacked split pays its prologue, Q load and
// part write again for the same SM's share of HBM: worth it only when long (H100, B1 H32/8
// Skv32768 D64: 31 splits of 16-17 blocks, two CTAs on most SMs, 0.0434 ms; 16 of 32 blocks, one
// an SM, 0.0394). And splitting at all costs the combine (every part written, then the last CTA's
// merge: about 2 us on the H100): where the unsplit CTAs already run one an SM, on the deep ring,
// a stacked split gains only the bytes in flight that ring lacks, worth the combine from about 100
// key blocks (H100, B16 H32/8 D64, unsplit against 2 splits: Skv4096 0.0586/0.0610 ms, Skv8192
// 0.1043/0.1032, Skv16384 0.195/0.188).
inline constexpr DecodeStacking kDecodeStacking{32, 128};
// A cache read a row at a time (decode_row_lookups) stacks at any length: one CTA an SM leaves its
// rows' lookups' latency bare (B16 Skv4096 D64, pages of 16: 0.0801 ms unsplit, 0.0645 in two).
// At D64 it stacks from splits of 16 blocks, at D128 of 32 (H100, B1 H32/8 Skv32768, pages of 16,
// 31 splits of 17 blocks against 16 of 32: D64 0.0417/0.0445 ms, D128 0.0655/0.0641).
inline constexpr DecodeStacking decode_row_lookup_stacking(int64_t head_dim) {
  return {head_dim == 64 ? 16 : kDecodeStacking.min_split_blocks, 0};
}

// Shared memory after a decode CTA's main loop, laid over its drained K/V stages
// (flash3_decode_combine.cuh): each warp's part of O and its rows' max and sum, the rows' factors
// and log-sum-exp, then one weight a split part and row for the split combine, and a flag.
template <int kHeadDim>
struct DecodeCombineLayout {
  static constexpr int kORowFloats = kHeadDim + 4;  // 4 floats of padding against bank conflicts
  static constexpr int kO = 0;                      // [warp][row][kORowFloats] fp32
  static constexpr int kStats = kO + kDecodeWarps * kDecodeMaxRows * kORowFloats * 4;  // max, sum
  static constexpr int kFactor = kStats + kDecodeWarps * kDecodeMaxRows * 8;  // [warp][row]
  static constexpr int kLse = kFactor + kDecodeWarps * kDecodeMaxRows * 4;    // [row]
  static constexpr int kWeight = kLse + kDecodeMaxRows * 4;  // [row][weight_stride]
  // A row's split weights, the next row one float (a bank) further on.
  __host__ __device__ static constexpr int weight_stride(int max_splits) { return max_splits + 1; }
  __host__ __device__ static constexpr int last(int max_splits) {
    return kWeight + weight_stride(max_splits) * kDecodeMaxRows * 4;
  }
  __host__ __device__ static constexpr int bytes(int max_splits) { return last(max_splits) + 16; }
};

// A decode kernel's shared memory at kCtasPerSm CTAs an SM, from a 1024-aligned base (the dynamic
// allocation is rounded up to it: kAlignBytes): Q, then as many K/V stages as fit the SM's 228 KB
// (1 KB of each CTA's is the system's), 4 at most (D64 at 6 stages and 2 CTAs was faster at B64
// and slower at B1 and B64 MHA: docs/kernel-notes.md), then a full barrier a stage. Tiles are
// stored as TMA's 128-byte swizzle lays out boxes of 64 columns: a D128 tile is two 64-column
// halves, each of 128-byte rows whose 8-row atoms start 1024-aligned.
template <int kHeadDim, int kCtasPerSm_>
struct DecodeTraits {
  static constexpr int kCtasPerSm = kCtasPerSm_;
  static constexpr int kAlignBytes = 1024;
  static constexpr int kRowBytes = 128;  // a row of one 64-column half
  static constexpr int kHalves = kHeadDim / 64;
  static constexpr int kQHalfBytes = kDecodeMaxRows * kRowBytes;
  static constexpr int kQBytes = kHalves * kQHalfBytes;
  static constexpr int kTileHalfBytes = kDecodeBlockN * kRowBytes;
  static constexpr int kTileBytes = kHalves * kTileHalfBytes;  // one K or V block
  static constexpr int kStageBytes = 2 * kTileBytes;
  static constexpr int kBarrierBytes = 8 * 4;  // room for the most stages
  static constexpr int kStages = std::min(
      4, (228 * 1024 / kCtasPerSm - 1024 - kAlignBytes - kQBytes - kBarrierBytes) / kStageBytes);
  static constexpr int kBarrierOffset = kQBytes + kStages * kStageBytes;  // from the aligned base
  static constexpr int kSmemBytes = kAlignBytes + kBarrierOffset + kBarrierBytes;
  // The most split parts its combine merges: a power of two whose weights fit the drained stages
  // (D64 at 4 CTAs an SM: 64; the others kDecodeMaxSplits).
  static constexpr int kMaxSplits = [] {
    int splits = kDecodeMaxSplits;
    while (DecodeCombineLayout<kHeadDim>::bytes(splits) > kStages * kStageBytes) splits /= 2;
    return splits;
  }();
  static_assert(kHeadDim % 64 == 0, "tiles of whole 64-column halves");
  static_assert(kQHalfBytes % 1024 == 0 && kTileHalfBytes % 1024 == 0, "halves of whole atoms");
  static_assert(kStages >= 3, "two blocks in flight while one is read");
  static_assert(kMaxSplits >= 2, "the combine fits the drained stages");
};

// The CTAs an SM a decode launch holds, by head dim and packed rows (16: one m16 tile, 32: two).
// Decode is memory-bound, so the choice is bytes in flight. `wide` is the most CTAs the registers
// allow where a plan has CTAs to share the SMs: D64 one tile 4 (111 registers; cuDNN's decode
// kernel holds 4 an SM too, and at B64 H8 runs every (batch, head) in one resident wave), two tiles
// 3 (156), D128 2. `deep` is fewer CTAs with more stages each, for a plan of one CTA an SM or fewer
// (D64: 3 CTAs' 4 stages; H100, B1 H32/8 Skv32768, 16 splits, one CTA on 128 SMs: 0.0388 ms at 4
// stages, 0.0408 at 3). `fill`: the CTAs that keep one SM's share of HBM busy, about 64 KB in
// flight (D128 one, two stages ahead of 32 KB; D64 two). Measured on the H100: B16 H32/8 Skv32768
// runs best at one CTA an SM at D128 (0.701 ms; two 0.712) and at two or three at D64 (0.370; one
// 0.377). `wide_max_splits`: the wide kernel's combine holds that many parts; a plan of more runs
// deep (whose combine holds kDecodeMaxSplits).
struct DecodeSlots {
  int wide;
  int deep;
  int fill;
  int wide_max_splits;
};
template <int kHeadDim, int kWide, int kDeep, int kFill>
constexpr DecodeSlots decode_slots_of() {
  static_assert(DecodeTraits<kHeadDim, kDeep>::kMaxSplits == kDecodeMaxSplits,
                "the deep kernel combines as many parts as a plan splits into");
  return {kWide, kDeep, kFill, DecodeTraits<kHeadDim, kWide>::kMaxSplits};
}
inline constexpr DecodeSlots decode_slots(int64_t head_dim, int rows) {
  if (head_dim == 64)
    return rows <= 16 ? decode_slots_of<64, 4, 3, 2>() : decode_slots_of<64, 3, 3, 2>();
  return decode_slots_of<128, 2, 2, 1>();
}

// Rows of one (batch, K/V head): its group's query heads times Sq, contiguous in Q and O
// ([B, Hq, Sq, D], a group's heads adjacent), cut into CTAs of 16 or 32 rows.
inline int64_t decode_group_rows(const AttentionShape& s) {
  return s.heads / s.kv_heads * s.seq_q;
}
inline int decode_tile_rows(const AttentionShape& s) {
  return decode_group_rows(s) <= 16 ? 16 : 32;
}

// Keys any query sees: causal is top-left, so query i (i < Sq <= 16) sees keys 0..i alone.
inline int64_t decode_visible_keys(const AttentionShape& s) {
  return s.causal ? std::min(s.seq_kv, s.seq_q) : s.seq_kv;
}

// How evenly `ctas` equal CTAs load `sms` SMs that each hold `ctas_per_sm` at once and need
// `ctas_to_fill` of them to keep their bandwidth busy: 1 when every SM stays busy to the end.
// Within one resident wave it is the SMs' shares, in fills, that count: a memory-bound SM given
// one more fill than the others finishes last (H100, B1 H32/8 Skv32768 D128: 16 splits, 128 CTAs
// one an SM, 0.063 ms; 29 splits, 232 CTAs, 0.068). Past one wave it is the last wave's empty
// slots: those CTAs run with too few bytes in flight (D64 B64, 512 CTAs on 396 slots: 1.58 ms
// unsplit, 1.41-1.43 split 3-8).
inline double decode_balance(int64_t ctas, int sms, int ctas_per_sm, int ctas_to_fill) {
  const int64_t slots = static_cast<int64_t>(sms) * ctas_per_sm;
  if (ctas <= slots) {
    const double fills_per_sm = static_cast<double>(ctas) / (static_cast<double>(sms) * ctas_to_fill);
    return fills_per_sm / std::ceil(fills_per_sm);
  }
  return static_cast<double>(ctas) / static_cast<double>((ctas + slots - 1) / slots * slots);
}

// The split heuristic: `units` CTAs of `n_blocks` key blocks each split into the fewest parts whose
// balance (above) is within 5% of the best count's, among counts that change the blocks a split
// holds, at most kDecodeMaxSplits and at least kDecodeMinSplitBlocks blocks a split (where the
// split alone puts more than one CTA on an SM, as `stacking` allows).
// FlashAttention's decode heuristic counts CTA slots alone; on the H100 that split B16 H32/8 D128
// in two (256 CTAs, 0.712 ms) where one CTA an SM is faster (0.701), and left D64 B64 unsplit
// (docs/kernel-notes.md, the split sweep).
inline int decode_splits(int64_t units, int64_t n_blocks, int sms, int ctas_per_sm,
                         int ctas_to_fill, DecodeStacking stacking) {
  sms = std::max(sms, 1);
  ctas_per_sm = std::max(ctas_per_sm, 1);
  ctas_to_fill = std::clamp(ctas_to_fill, 1, ctas_per_sm);
  if (units < 1 || n_blocks < 1) return 1;
  const int64_t most =
      std::min<int64_t>(kDecodeMaxSplits, std::max<int64_t>(n_blocks / kDecodeMinSplitBlocks, 1));
  const auto blocks_each = [&](int64_t splits) { return (n_blocks + splits - 1) / splits; };
  const auto eligible = [&](int64_t splits) {
    if (splits == 1) return true;
    const bool stacked = units <= sms && units * splits > sms;
    return blocks_each(splits) != blocks_each(splits - 1) &&
           (!stacked ||
            (blocks_each(splits) >= stacking.min_split_blocks && n_blocks >= stacking.min_blocks));
  };
  const auto balance = [&](int64_t splits) {
    return decode_balance(units * splits, sms, ctas_per_sm, ctas_to_fill);
  };
  double best = 0;
  for (int64_t s = 1; s <= most; ++s)
    if (eligible(s)) best = std::max(best, balance(s));
  for (int64_t s = 1; s <= most; ++s)
    if (eligible(s) && balance(s) >= 0.95 * best)
      return static_cast<int>((n_blocks + blocks_each(s) - 1) / blocks_each(s));
  return 1;
}

// One decode launch: CTA (row block, split) on grid x, K/V head on y, batch on z.
struct DecodePlan {
  int rows;              // packed query rows a CTA holds: 16 or 32
  int row_blocks;        // CTAs along a group's rows
  int64_t visible_keys;  // keys any query sees
  int n_blocks;          // key blocks of the visible keys
  int splits;            // CTAs along the keys; 1: no split, no combine
  int blocks_per_split;  // the last split may hold fewer
  int64_t units;         // (batch, K/V head, row block): CTAs of one split
  int ctas_per_sm;       // the kernel's (decode_slots): wide, or deep where no SM gets two or
                         // the wide kernel's combine holds fewer parts than `splits`
  bool tma_kv;           // K/V stream as TMA boxes, else by cp.async (plan_decode says when)
};

// Whether a K/V cache of pages of `page_size` tokens (0: contiguous) is read a row at a time: each
// row's page looked up in the block table, as pages smaller than a key block need. Pages of whole
// blocks are read as a contiguous cache is, a page looked up once a block.
inline bool decode_row_lookups(int64_t page_size) {
  return page_size > 0 && page_size % kDecodeBlockN != 0;
}

// `page_size`: K and V read through a block table, pages of that many tokens; 0: contiguous.
// A cache read a row at a time (decode_row_lookups) has its rows' lookups before each block's
// copies, and one CTA an SM leaves that latency bare (H100, B16 H32/8 Skv32768 D128, pages of 16:
// 0.887 ms at one CTA an SM, 0.724 at two), so it counts at least two CTAs an SM as its fill (not
// every one an SM holds: at D64, four split B1 H32/8 Skv131072 61 ways, 0.1165 ms, where the 32
// ways of two ran 0.1110), stacks as decode_row_lookup_stacking allows, and streams by cp.async (a
// TMA box a page of 16 was slower: B16 Skv32768 D128 0.714/0.699 ms). Otherwise K and V stream as
// TMA boxes but for D64 plans of one CTA an SM: a box ring refilled as soon as every warp is past a
// block keeps one more block in flight (H100, TMA against cp.async: B64 H32/8 Skv32768
// D64 1.361/1.372 ms, D128 2.684/2.700; B16 Skv4096 D128, one CTA an SM, 0.1008/0.1016; B16
// Skv32768 D128 pages of 64 0.6925/0.6988), while at D64 one CTA an SM cp.async was faster (B1
// Skv4096 0.0140/0.0144 ms, Skv32768 0.0390/0.0394).
inline DecodePlan plan_decode(const AttentionShape& s, int sms, int64_t page_size = 0) {
  DecodePlan p{};
  p.rows = decode_tile_rows(s);
  p.row_blocks = static_cast<int>((decode_group_rows(s) + p.rows - 1) / p.rows);
  p.visible_keys = decode_visible_keys(s);
  p.n_blocks = static_cast<int>((p.visible_keys + kDecodeBlockN - 1) / kDecodeBlockN);
  p.units = s.batch * s.kv_heads * p.row_blocks;
  const DecodeSlots slots = decode_slots(s.head_dim, p.rows);
  const bool row_lookups = decode_row_lookups(page_size);
  const int ctas_to_fill = row_lookups ? std::max(slots.fill, 2) : slots.fill;
  const int splits =
      decode_splits(p.units, p.n_blocks, sms, slots.wide, ctas_to_fill,
                    row_lookups ? decode_row_lookup_stacking(s.head_dim) : kDecodeStacking);
  p.blocks_per_split = (p.n_blocks + splits - 1) / splits;
  p.splits = (p.n_blocks + p.blocks_per_split - 1) / p.blocks_per_split;  // none empty
  const bool one_each = p.units * p.splits <= sms;
  p.ctas_per_sm = one_each || p.splits > slots.wide_max_splits ? slots.deep : slots.wide;
  p.tma_kv = !row_lookups && (s.head_dim != 64 || !one_each);
  return p;
}

// The split parts in the workspace: an arrival counter per unit (zero between launches: the CTA
// that combines sets it back), then each (unit, split, row)'s log2-sum-exp2 and normalised O
// (fp32).
struct DecodeWorkspace {
  unsigned* arrivals = nullptr;
  float* lse = nullptr;
  float* partial_o = nullptr;
};
inline std::size_t decode_workspace_bytes(const DecodePlan& p, int64_t head_dim) {
  if (p.splits == 1) return 0;
  const auto rows =
      static_cast<std::size_t>(p.units) * static_cast<std::size_t>(p.splits) * kDecodeMaxRows;
  const std::size_t arrivals =
      (static_cast<std::size_t>(p.units) * sizeof(unsigned) + 255) / 256 * 256;
  return arrivals + rows * sizeof(float) * (1 + static_cast<std::size_t>(head_dim));
}
inline DecodeWorkspace decode_workspace(void* base, const DecodePlan& p) {
  if (p.splits == 1) return {};
  const auto rows =
      static_cast<std::size_t>(p.units) * static_cast<std::size_t>(p.splits) * kDecodeMaxRows;
  const std::size_t arrivals =
      (static_cast<std::size_t>(p.units) * sizeof(unsigned) + 255) / 256 * 256;
  auto* const bytes = static_cast<unsigned char*>(base);
  return {reinterpret_cast<unsigned*>(bytes), reinterpret_cast<float*>(bytes + arrivals),
          reinterpret_cast<float*>(bytes + arrivals + rows * sizeof(float))};
}

// Where key rows of (batch b, K/V head h) lie in K or V, in elements: paged_kv_offset's address,
// with the page found once a key block where a page holds whole blocks (page size a multiple of
// kDecodeBlockN; a contiguous cache is one page a sequence), and by shift and mask where a block
// holds whole pages (page size a power of two dividing kDecodeBlockN).
struct DecodeKvAddress {
  const int32_t* block_table = nullptr;  // null: contiguous [B, Hkv, Skv, D]
  int64_t pages_per_sequence = 1;
  int64_t page_stride = 0;  // contiguous: one sequence, Hkv * Skv * D
  int64_t head_stride = 0;  // contiguous: Skv * D
  int64_t row_stride = 0;   // D
  int page_size = 0;        // contiguous: 0
  int page_shift = 0;       // log2(page_size) when page_size < kDecodeBlockN

  __host__ __device__ bool small_pages() const {
    return block_table != nullptr && page_size < kDecodeBlockN;
  }
  // The pool page of key n0 (a multiple of kDecodeBlockN) of a cache whose pages hold whole
  // blocks; the block's rows start at row n0 % page_size of it.
  __host__ __device__ int32_t block_page(int64_t b, int n0) const {
    return block_table[b * pages_per_sequence + n0 / page_size];
  }
  // Key n0 of such a cache (or a contiguous one): its row's offset; the block's other rows follow
  // it at row_stride.
  __host__ __device__ int64_t block_offset(int64_t b, int64_t h, int n0) const {
    if (block_table == nullptr) return b * page_stride + h * head_stride + n0 * row_stride;
    return block_row(block_page(b, n0), h, n0);
  }
  // The same from the block's pool page (block_page's).
  __host__ __device__ int64_t block_row(int64_t page, int64_t h, int n0) const {
    return page * page_stride + h * head_stride + (n0 % page_size) * row_stride;
  }
  // Key `key` of a cache whose blocks hold whole pages: its pool page (looked up ahead of its
  // use), then its row's offset in that page.
  __host__ __device__ int32_t small_page(int64_t b, int key) const {
    return block_table[b * pages_per_sequence + (key >> page_shift)];
  }
  __host__ __device__ int64_t small_page_row(int64_t page, int64_t h, int key) const {
    return page * page_stride + h * head_stride + (key & (page_size - 1)) * row_stride;
  }
};

inline DecodeKvAddress contiguous_kv_address(const AttentionShape& s) {
  DecodeKvAddress a;
  a.head_stride = s.seq_kv * s.head_dim;
  a.page_stride = s.kv_heads * a.head_stride;
  a.row_stride = s.head_dim;
  return a;
}

// False when the layout's page size is neither a multiple of kDecodeBlockN nor a power of two
// dividing it (the limits refuse such pages first).
inline bool paged_kv_address(const PagedKv& paged, DecodeKvAddress& a) {
  const PagedKvLayout& l = paged.layout;
  if (l.page_size < 1 || (l.page_size % kDecodeBlockN != 0 && kDecodeBlockN % l.page_size != 0))
    return false;
  a.block_table = paged.block_table;
  a.pages_per_sequence = l.pages_per_sequence;
  a.page_stride = l.page_stride;
  a.head_stride = l.head_stride;
  a.row_stride = l.row_stride;
  a.page_size = static_cast<int>(l.page_size);
  a.page_shift = 0;
  while ((int64_t{1} << a.page_shift) < l.page_size) ++a.page_shift;
  return true;
}

// What the kernel reads of a launch (flash3_decode_kernel.cuh): the tensors, the K/V addresses,
// the split parts, and the plan's sizes.
struct DecodeParams {
  const void* q;
  const void* k;  // the contiguous tensor or the page pool
  const void* v;
  void* o;
  DecodeKvAddress kv;
  DecodeWorkspace parts;
  int heads;
  int kv_heads;
  int seq_q;
  int group_rows;  // H / Hkv * Sq
  int visible_keys;
  int row_blocks;
  int blocks_per_split;
  int n_blocks;
  int splits;
  bool causal;
  float scale_log2;
};

}  // namespace sdpa::flash3
