#include "report/cell_escape.h"

#include <charconv>

#include "model/printable_text.h"

namespace sdpa {
namespace {

bool is_number(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const char* begin = text.data() + (text.starts_with('+') ? 1 : 0);
  const auto [at, error] = std::from_chars(begin, end, value);
  return !text.empty() && error == std::errc() && at == end;
}

}  // namespace

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char ch : printable_text(text)) {
    switch (ch) {
      case '|': out += "\\|"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string csv_field(std::string_view text) {
  const bool formula = !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos &&
                       !is_number(text);
  if (!formula && text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string quoted = formula ? "\"'" : "\"";
  for (const char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

}  // namespace sdpa
