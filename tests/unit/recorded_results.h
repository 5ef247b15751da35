// Recorded H200 runs (tests/data/recorded-*.json, copies of runs once kept in results/), read as
// `report` reads them: tests of the printers on real runs, without a GPU.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "report/report.h"

namespace sdpa::test {

inline RunReport recorded(const std::string& name) {
  std::ifstream in(std::string(SDPA_SOURCE_DIR) + "/tests/data/recorded-" + name);
  return report_from_json(nlohmann::json::parse(in));
}

}  // namespace sdpa::test
