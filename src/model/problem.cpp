#include "model/problem.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>

#include <fmt/format.h>

namespace sdpa {
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

double Problem::forward_flops() const {
  return 4.0 * static_cast<double>(batch * heads * head_dim) *
         static_cast<double>(unmasked_pairs());
}

double Problem::flops() const {
  switch (pass) {
    case AttentionPass::forward:
      return forward_flops();
    case AttentionPass::backward:
      return 2.5 * forward_flops();
    case AttentionPass::forward_backward:
      return 3.5 * forward_flops();
  }
  return forward_flops();
}

double Problem::min_bytes() const {
  const double elem = dtype_bytes(dtype);
  const double q = static_cast<double>(q_elements());  // the size of Q, O, dO and dQ each
  const double kv = static_cast<double>(kv_elements());  // of K, V, dK and dV each
  switch (pass) {
    case AttentionPass::forward:
      return elem * (2 * q + 2 * kv);
    case AttentionPass::backward:
      return elem * (5 * q + 4 * kv);
    case AttentionPass::forward_backward:
      return elem * (4 * q + 4 * kv);
  }
  return elem * (2 * q + 2 * kv);
}

namespace {

// a * b * ..., or nullopt when the product overflows int64.
std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t product = 1;
  for (const int64_t f : factors)
    if (__builtin_mul_overflow(product, f, &product)) return std::nullopt;
  return product;
}

}  // namespace

std::string problem_error(const Problem& p) {
  if (p.batch < 1 || p.heads < 1 || p.kv_heads < 1 || p.seq_q < 1 || p.seq_kv < 1 || p.head_dim < 1)
    return "every size must be positive";
  if (p.page_size < 0) return fmt::format("page size {} must be positive", p.page_size);
  if (p.heads % p.kv_heads != 0) return fmt::format("kv-heads {} must divide heads {}", p.kv_heads, p.heads);
  // Q, K, V and O at 2 bytes each, and the scores of the unfused backends (up to 8 bytes each
  // in fp32 copies), must stay countable; far below this no GPU holds them anyway.
  constexpr int64_t kMaxTensorElements = int64_t{1} << 40;  // 2 TiB in bf16
  constexpr int64_t kMaxScoreElements = int64_t{1} << 56;
  const std::optional<int64_t> q = checked_product({p.batch, p.heads, p.seq_q, p.head_dim});
  const std::optional<int64_t> kv = checked_product({p.batch, p.kv_heads, p.seq_kv, p.head_dim});
  const std::optional<int64_t> scores = checked_product({p.batch, p.heads, p.seq_q, p.seq_kv});
  if (!q || *q > kMaxTensorElements || !kv || *kv > kMaxTensorElements)
    return fmt::format("{}: Q or K/V would hold more than 2^40 elements, more than any GPU holds", p.shape_label());
  if (p.paged()) {
    const std::optional<int64_t> pool =
        checked_product({p.batch, p.pages_per_sequence(), p.page_size, p.kv_heads, p.head_dim});
    if (!pool || *pool > kMaxTensorElements)
      return fmt::format("{}: the K/V page pool would hold more than 2^40 elements", p.shape_label());
    if (p.batch * p.pages_per_sequence() > INT32_MAX)  // no overflow: the pool's product fit
      return fmt::format("{}: more than 2^31 - 1 pages, past the int32 block table", p.shape_label());
  }
  if (!scores || *scores > kMaxScoreElements)
    return fmt::format("{}: the score matrix would hold more than 2^56 elements", p.shape_label());
  return {};
}

std::string Problem::shape_label() const {
  std::string s = fmt::format("B{} H{}", batch, heads);
  if (kv_heads != heads) s += fmt::format(" Hkv{}", kv_heads);
  s += fmt::format(" S{}", seq_q);
  if (seq_kv != seq_q) s += fmt::format(" Skv{}", seq_kv);
  s += fmt::format(" D{}", head_dim);
  if (paged()) s += fmt::format(" page{}", page_size);
  if (pass != AttentionPass::forward) s += fmt::format(" {}", pass_name(pass));
  if (launch != LaunchMode::eager) s += fmt::format(" {}", launch_name(launch));
  return s;
}

std::string paged_kv_unsupported(std::string_view backend) {
  return fmt::format("paged K/V (--page-size) is not supported by {}", backend);
}

const char* dtype_name(DType t) { return t == DType::bf16 ? "bf16" : "fp16"; }

const char* pass_name(AttentionPass pass) {
  switch (pass) {
    case AttentionPass::forward:
      return "fwd";
    case AttentionPass::backward:
      return "bwd";
    case AttentionPass::forward_backward:
      return "fwd+bwd";
  }
  return "fwd";
}

const char* pass_call_name(AttentionPass pass) {
  switch (pass) {
    case AttentionPass::forward:
      return "forward";
    case AttentionPass::backward:
      return "backward";
    case AttentionPass::forward_backward:
      return "forward+backward";
  }
  return "forward";
}

bool parse_pass(const std::string& text, AttentionPass& out) {
  for (const AttentionPass pass :
       {AttentionPass::forward, AttentionPass::backward, AttentionPass::forward_backward}) {
    if (text == pass_name(pass)) {
      out = pass;
      return true;
    }
  }
  return false;
}

const char* launch_name(LaunchMode launch) { return launch == LaunchMode::graph ? "graph" : "eager"; }

bool parse_launch(const std::string& text, LaunchMode& out) {
  for (const LaunchMode launch : {LaunchMode::eager, LaunchMode::graph}) {
    if (text == launch_name(launch)) {
      out = launch;
      return true;
    }
  }
  return false;
}

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
