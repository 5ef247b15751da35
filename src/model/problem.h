// One attention problem: the struct that crosses every boundary (sweep, backends, reports).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dtype.h"

namespace sdpa {

// Which pass a case times: the forward, the backward alone (from a saved forward), or both as a
// training step runs them.
enum class AttentionPass { forward, backward, forward_backward };

// How a case's calls reach the GPU: launched one by one as the backend makes them (eager), or
// captured once into a CUDA graph whose replays are timed (graph: one launch per call).
enum class LaunchMode { eager, graph };

struct Problem {
  int64_t batch = 1;
  int64_t heads = 1;     // query heads (Hq)
  int64_t kv_heads = 1;  // key/value heads (Hkv); Hq % Hkv == 0
  int64_t seq_q = 1;
  int64_t seq_kv = 1;
  int64_t head_dim = 64;
  DType dtype = DType::bf16;
  bool causal = false;  // top-left aligned, as PyTorch's is_causal: query i sees keys j <= i
  double scale = 0.0;   // softmax scale; 0 means 1/sqrt(head_dim)
  AttentionPass pass = AttentionPass::forward;
  LaunchMode launch = LaunchMode::eager;
  int64_t page_size = 0;  // tokens per K/V page of a paged KV cache; 0: contiguous K and V

  bool paged() const { return page_size > 0; }
  // Pages one sequence's keys take (the last partly filled); 0 when not paged.
  int64_t pages_per_sequence() const { return paged() ? seq_kv / page_size + (seq_kv % page_size != 0) : 0; }
  // Elements of K (or V) in the page pool: every page whole, the last ones' unused rows included.
  int64_t kv_pool_elements() const { return batch * pages_per_sequence() * page_size * kv_heads * head_dim; }

  double softmax_scale() const;
  int64_t group_size() const { return heads / kv_heads; }

  int64_t q_elements() const { return batch * heads * seq_q * head_dim; }
  int64_t kv_elements() const { return batch * kv_heads * seq_kv * head_dim; }
  int64_t score_elements() const { return batch * heads * seq_q * seq_kv; }

  // (query, key) pairs that the mask leaves visible, per (batch, head).
  int64_t unmasked_pairs() const;
  bool has_backward() const { return pass != AttentionPass::forward; }
  bool has_forward() const { return pass != AttentionPass::backward; }

  // Forward FLOPs of both GEMMs counted on the unmasked pairs only: 4 * B * Hq * D * pairs.
  double forward_flops() const;
  // FLOPs of the pass: the forward's, 2.5x for the backward (5 GEMMs against 2, the convention of
  // the FlashAttention papers), 3.5x for both.
  double flops() const;
  // Fewest bytes the pass must move. Forward: read Q, K, V, write O. Backward: read Q, K, V, O,
  // dO, write dQ, dK, dV. Both: read Q, K, V, dO, write O, dQ, dK, dV.
  double min_bytes() const;

  // Every size positive and every element count above at most 2^53 (exact as a double; the
  // bytes of a few buffers then fit in int64_t). Nothing larger fits on a GPU, and the integer

  // "B8 H16 S1024 D64" (with KV heads and Skv only when they differ, the pass when it is not the
  // forward and the launch when it is a graph: "B8 H16 S1024 D64 bwd graph").
  std::string shape_label() const;
};

// Why `p` cannot be a problem at all, or empty: relations between its sizes (Hkv divides Hq), and
// sizes whose element counts would not fit the arithmetic or any GPU (checked, with the numbers).
std::string problem_error(const Problem& p);

// Why `backend`, which cannot read a paged K/V cache, does not run a paged problem.
std::string paged_kv_unsupported(std::string_view backend);

const char* dtype_name(DType t);
// "fwd", "bwd", "fwd+bwd"
const char* pass_name(AttentionPass pass);
// What one call of the pass is called in a report's text ("3 kernels per backward"): "forward",
// "backward", "forward+backward".
const char* pass_call_name(AttentionPass pass);
// Parses a pass_name(); returns false on anything else.
bool parse_pass(const std::string& text, AttentionPass& out);
// "eager", "graph"
const char* launch_name(LaunchMode launch);
// Parses a launch_name(); returns false on anything else.
bool parse_launch(const std::string& text, LaunchMode& out);
// Parses "bf16" / "fp16"; returns false on anything else.
bool parse_dtype(const std::string& text, DType& out);

inline constexpr const char* kFlopCountConvention =
    "forward 4*B*Hq*D*unmasked_pairs (causal counts only the visible (query, key) pairs); "
    "backward 2.5x the forward's; fwd+bwd 3.5x";

}  // namespace sdpa
