#pragma once

#include <string>

namespace sdpa {

// The current time as ISO 8601 in UTC, e.g. 2026-12-02T12:00:00Z.
std::string utc_now_iso8601();

}  // namespace sdpa
