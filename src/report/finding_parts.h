// A finding in parts, so that it can be said once across shapes and in a summary's few words:
// what it is (the same for every shape), why (a note said once), and this case's figures.
#pragma once

#include <string>

#include "model/problem.h"
#include "model/profile.h"

namespace sdpa {

struct FindingParts {
  std::string what;    // "hidden device-to-device copy per forward" (or backward: the case's pass)
  std::string why;     // "(an out-of-place op, such as masked_fill, copies its input first)"; may be ""
  std::string figure;  // "256 MiB, 127 us"
};

// Brief: the rules this tool knows are said from the case's profile in few words, any other finding
// (a newer rule, a clock finding) is split at its text's first ": ". Not brief: every finding's
// whole text, split so. `pass` names what the counts are per ("per backward").
FindingParts finding_parts(const Finding& f, const CaseProfile* profile, AttentionPass pass,
                           bool brief = true);

// "256 MiB", "4.0 GiB"; "127 us", "2.02 ms".
std::string bytes_text(double bytes);
std::string duration_text(double us);

}  // namespace sdpa
