// Sweep axes as data: the cases are the cartesian product of these lists.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure/sample_stats.h"
#include "problem.h"

namespace sdpa {

// Bad input from the user (flags or config): the tool exits with code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SweepConfig {
  std::string name = "custom";
  std::vector<std::string> backends{"all"};
  std::vector<int64_t> batch{1};
  std::vector<int64_t> heads{1};
  std::vector<int64_t> kv_heads;  // empty: the same as heads
  std::vector<int64_t> seq{1024};
  std::vector<int64_t> seq_kv;    // empty: the same as seq
  std::vector<int64_t> head_dim{64};
  std::vector<DType> dtypes{DType::bf16};
  std::vector<bool> causal{true};
  double scale = 0.0;  // 0: 1/sqrt(head_dim)
  std::optional<uint64_t> seed;  // none: a fresh seed per run
  int warmup = 3;
  bool hot = false;  // back-to-back samples with a warm L2 instead of flushing it before each
  StoppingRule stopping;
};

// Every problem of the sweep, validated; throws InputError naming the bad value.
std::vector<Problem> expand_problems(const SweepConfig& config);

}  // namespace sdpa
