// The findings under the table, said once per backend and kind of finding across the run's
// shapes: "naive: hidden device-to-device memcpy: ...: S1024 256.0 MiB, ...; S2048 ...".
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/result.h"
#include "report/text_layout.h"

namespace sdpa {

struct FindingGroup {
  std::string backend;
  std::string rule;
  std::string head;  // what the finding says, the words every shape shares
  // Per case: the parts of its problem that differ across the run ("S1024"; "" when none do),
  // and what it measured.
  std::vector<std::pair<std::string, std::string>> figures;
  bool every_case = false;  // every case of the backend has it
};

// The run's findings grouped by backend and kind, in the order they first appear, in few words;
// with `everything` (--kernels, --wide), each one's whole text, and a library kernel's (cuBLAS,
// cuDNN) low occupancy too, which is the library's design and otherwise left out.
std::vector<FindingGroup> group_findings(const RunReport& report, bool everything);

// One line per group: "backend: head: label figure; label figure", wrapped at the style's width.
std::string format_findings(const RunReport& report, const TextStyle& style, bool everything);

}  // namespace sdpa
