#include "model/problem.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include <fmt/format.h>

namespace sdpa {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 53;

// The product of positive factors while it stays within kMaxElements.
bool product_in_range(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (const int64_t f : factors) {
    if (f <= 0 || product > kMaxElements / f) return false;
    product *= f;
  }
  return true;
}

}  // namespace

double Problem::softmax_scale() const {
  return scale > 0.0 ? scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

int64_t Problem::unmasked_pairs() const {
  if (!causal) return seq_q * seq_kv;
  // Row i sees min(i + 1, Skv) keys: a triangle up to row Skv - 1, full rows after it.
  const int64_t tri_rows = std::min(seq_q, seq_kv);
  const int64_t triangle = tri_rows * (tri_rows + 1) / 2;
  return triangle + (seq_q - tri_rows) * seq_kv;
}

double Problem::flops() const {
  return 4.0 * static_cast<double>(batch * heads * head_dim) *
         static_cast<double>(unmasked_pairs());
}

double Problem::min_bytes() const {
  const double elem = dtype_bytes(dtype);
  return elem * (2.0 * static_cast<double>(q_elements()) + 2.0 * static_cast<double>(kv_elements()));
}

bool Problem::sizes_in_range() const {
  // The other products (B*Hq*D, the causal triangle, FLOPs and bytes) are bounded by these.
  return product_in_range({batch, heads, seq_q, head_dim}) &&
         product_in_range({batch, kv_heads, seq_kv, head_dim}) &&
         product_in_range({batch, heads, seq_q, seq_kv});
}

std::string Problem::shape_label() const {
  std::string s = fmt::format("B{} H{}", batch, heads);
  if (kv_heads != heads) s += fmt::format(" Hkv{}", kv_heads);
  s += fmt::format(" S{}", seq_q);
  if (seq_kv != seq_q) s += fmt::format(" Skv{}", seq_kv);
  s += fmt::format(" D{}", head_dim);
  return s;
}

const char* dtype_name(DType t) { return t == DType::bf16 ? "bf16" : "fp16"; }

bool parse_dtype(const std::string& text, DType& out) {
  if (text == "bf16") {
    out = DType::bf16;
    return true;
  }
  if (text == "fp16") {
    out = DType::fp16;
    return true;
  }
  return false;
}

}  // namespace sdpa
