#include "sweep.h"

#include <fmt/format.h>

namespace sdpa {
namespace {

void require_positive(const std::vector<int64_t>& values, const char* axis) {
  if (values.empty()) throw InputError(fmt::format("{} needs at least one value", axis));
  for (const int64_t v : values)
    if (v <= 0) throw InputError(fmt::format("{} must be positive, got {}", axis, v));
}

}  // namespace

std::vector<Problem> expand_problems(const SweepConfig& c) {
  require_positive(c.batch, "batch");
  require_positive(c.heads, "heads");
  require_positive(c.seq, "seq");
  require_positive(c.head_dim, "head-dim");
  if (!c.kv_heads.empty()) require_positive(c.kv_heads, "kv-heads");
  if (!c.seq_kv.empty()) require_positive(c.seq_kv, "seq-kv");
  if (c.dtypes.empty()) throw InputError("dtype needs at least one value");
  if (c.causal.empty()) throw InputError("causal needs at least one value");
  if (c.scale < 0.0) throw InputError(fmt::format("scale must be positive, got {}", c.scale));
  if (c.warmup < 0) throw InputError(fmt::format("warmup must be >= 0, got {}", c.warmup));
  if (c.stopping.min_samples < 1)
    throw InputError(fmt::format("min-samples must be >= 1, got {}", c.stopping.min_samples));
  if (!(c.stopping.max_noise > 0))
    throw InputError(fmt::format("max-noise must be positive, got {}%", 100 * c.stopping.max_noise));
  if (c.stopping.min_time_s < 0 || c.stopping.timeout_s < c.stopping.min_time_s)
    throw InputError(fmt::format("need 0 <= min-time <= timeout, got {} s and {} s", c.stopping.min_time_s,
                                 c.stopping.timeout_s));

  std::vector<Problem> problems;
  for (const DType dtype : c.dtypes)
    for (const bool causal : c.causal)
      for (const int64_t d : c.head_dim)
        for (const int64_t b : c.batch)
          for (const int64_t h : c.heads)
            for (const int64_t hkv : c.kv_heads.empty() ? std::vector<int64_t>{h} : c.kv_heads) {
              if (h % hkv != 0)
                throw InputError(fmt::format("kv-heads {} must divide heads {}", hkv, h));
              for (const int64_t s : c.seq)
                for (const int64_t skv : c.seq_kv.empty() ? std::vector<int64_t>{s} : c.seq_kv) {
                  Problem p;
                  p.batch = b;
                  p.heads = h;
                  p.kv_heads = hkv;
                  p.seq_q = s;
                  p.seq_kv = skv;
                  p.head_dim = d;
                  p.dtype = dtype;
                  p.causal = causal;
                  p.scale = c.scale;
                  problems.push_back(p);
                }
            }
  return problems;
}

}  // namespace sdpa
