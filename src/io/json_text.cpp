#include "io/json_text.h"

#include <fmt/format.h>

#include "model/errors.h"

namespace sdpa {

nlohmann::json parse_json_text(std::string_view text, const std::string& source) {
  const auto limit_depth = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxJsonDepth)
      throw InputError(fmt::format("{}: nested deeper than {} levels", source, kMaxJsonDepth));
    return true;
  };
  return nlohmann::json::parse(text.begin(), text.end(), limit_depth, true, false);
}

}  // namespace sdpa
