// The verification bounds of the error model (docs/verification-notes.md): several times tighter
// than the flat bounds they replaced, and still met by every verified case of the committed runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "run/verify.h"

namespace sdpa {
namespace {

TEST(Tolerance, TighterThanTheFlatBoundsByAFactorOfTwoAndMore) {
  for (const int64_t keys : {1, 17, 4096, 131072}) {
    const Tolerance bf16 = tolerance_for(DType::bf16, keys);
    const Tolerance fp16 = tolerance_for(DType::fp16, keys);
    EXPECT_LE(bf16.rel_l2, 2e-2 / 2) << keys;
    EXPECT_LE(bf16.max_abs, 0.25 / 3.5) << keys;
    EXPECT_LE(fp16.rel_l2, 5e-3 / 4) << keys;
    EXPECT_LE(fp16.max_abs, 0.06 / 6.5) << keys;
    EXPECT_LT(fp16.max_abs, bf16.max_abs);
  }
  EXPECT_GT(tolerance_for(DType::fp16, 1 << 20).rel_l2, tolerance_for(DType::fp16, 1).rel_l2)
      << "the reference's own error grows with the keys";
}

// Every verified case of the reference results (results/) passes the new bounds; the smallest
// margin is printed (the notes quote it over the larger set the tree once held).
TEST(Tolerance, TheCommittedRunsPassWithAMargin) {
  int cases = 0;
  double smallest_rel_margin = 1e9;
  double smallest_abs_margin = 1e9;
  for (const auto& file : std::filesystem::directory_iterator(SDPA_SOURCE_DIR "/results")) {
    if (file.path().extension() != ".json") continue;
    std::ifstream in(file.path());
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (!doc.is_object() || !doc.contains("cases") || !doc["cases"].is_array()) continue;
    for (const nlohmann::json& c : doc["cases"]) {
      if (!c.contains("verification")) continue;
      const nlohmann::json& v = c["verification"];
      const nlohmann::json& p = c["problem"];
      const DType dtype = p["dtype"] == "bf16" ? DType::bf16 : DType::fp16;
      const Tolerance tol = tolerance_for(dtype, p["seq_kv"].get<int64_t>());
      const double rel = v["rel_l2_error"].get<double>();
      const double abs = v["max_abs_error"].get<double>();
      SCOPED_TRACE(file.path().filename().string() + " " + c["backend"].get<std::string>());
      EXPECT_LE(rel, tol.rel_l2);
      EXPECT_LE(abs, tol.max_abs);
      smallest_rel_margin = std::min(smallest_rel_margin, tol.rel_l2 / rel);
      smallest_abs_margin = std::min(smallest_abs_margin, tol.max_abs / abs);
      ++cases;
    }
  }
  EXPECT_GT(cases, 20);
  std::cout << cases << " verified cases; smallest margin: rel L2 " << smallest_rel_margin << "x, max abs "
            << smallest_abs_margin << "x\n";
}

}  // namespace
}  // namespace sdpa
