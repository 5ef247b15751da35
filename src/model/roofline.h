// Where a case sits against the GPU's measured ceilings. A forward whose arithmetic intensity
// (FLOPs over the fewest bytes it must move, Problem::min_bytes) is below the ridge point (the
// GEMM ceiling over the read ceiling) is memory-bound: its measure is bandwidth against the HBM
// read ceiling; above it, TFLOP/s against the GEMM ceiling of its dtype. Without a read ceiling
// (results from before it) every case is held against compute, as they were.
#pragma once

#include <optional>
#include <vector>

#include "model/device.h"
#include "model/profile.h"
#include "model/result.h"

namespace sdpa {

// The ceiling a case is held against.
enum class Ceiling { compute, read_bandwidth };
const char* ceiling_id(Ceiling c);  // the JSON's: "compute", "read_bandwidth"

struct PeakShare {
  Ceiling ceiling = Ceiling::compute;
  double percent = 0;    // the achieved rate over the ceiling that applies
  double intensity = 0;  // FLOP per byte of Problem::min_bytes
  double ridge = 0;      // FLOP per byte where the ceilings meet; 0 when the read ceiling is unknown
};

// The GEMM ceiling of the problem's dtype, TFLOP/s.
double compute_ceiling_tflops(const Ceilings& ceilings, DType dtype);
// None without timing, or without a positive ceiling to hold it against.
std::optional<PeakShare> peak_share(const CaseResult& c, const Ceilings& ceilings);

// Under this share of the read ceiling a memory-bound case is far from it: a finding says why.
inline constexpr double kFarFromReadCeiling = 0.5;
// The fewest rows of a tensor-core MMA (mma.sync m16nNk16; wgmma's M is 64): a query tile of
// fewer real rows leaves the rest of every MMA idle.
inline constexpr int kMinMmaRows = 16;

// "far-from-read-ceiling" for a memory-bound case under kFarFromReadCeiling of the read ceiling,
// with each reason its data shows: fewer CTAs than `sm_count` SMs (0: unknown), query rows that
// fill few rows of an MMA, DRAM bytes the counters measured past the minimum. Empty otherwise.
std::vector<Finding> bandwidth_findings(const CaseResult& c, const Ceilings& ceilings, int sm_count);

}  // namespace sdpa
