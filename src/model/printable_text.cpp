#include "model/printable_text.h"

#include <fmt/format.h>

namespace sdpa {
namespace {

// The length of the UTF-8 sequence that starts at `i`, 0 when it is not a valid one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  std::size_t n = 0;
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) n = 2;
  else if (b >= 0xE0 && b <= 0xEF) n = 3;
  else if (b >= 0xF0 && b <= 0xF4) n = 4;
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  // Overlong forms, surrogates and code points past U+10FFFF.
  if (b == 0xE0 && byte(i + 1) < 0xA0) return 0;
  if (b == 0xED && byte(i + 1) > 0x9F) return 0;
  if (b == 0xF0 && byte(i + 1) < 0x90) return 0;
  if (b == 0xF4 && byte(i + 1) > 0x8F) return 0;
  return n;
}

// The escape for the character of `length` bytes at `i`, empty when it prints as itself.
std::string escape_at(std::string_view s, std::size_t i, std::size_t length) {
  const unsigned char b = static_cast<unsigned char>(s[i]);
  if (length == 0) return fmt::format("\\x{:02x}", b);
  if (length == 1) {
    if (b == '\n') return "\\n";
    if (b == '\r') return "\\r";
    if (b == '\t') return "\\t";
    if (b < 0x20 || b == 0x7F) return fmt::format("\\x{:02x}", b);
    return {};
  }
  if (length == 2 && b == 0xC2 && static_cast<unsigned char>(s[i + 1]) <= 0x9F)
    return fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
  return {};
}

}  // namespace

bool is_printable_text(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    if (!escape_at(text, i, n).empty()) return false;
    i += n == 0 ? 1 : n;
  }
  return true;
}

std::string printable_text(std::string_view text) {
  if (is_printable_text(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_length(text, i);
    const std::string escape = escape_at(text, i, n);
    if (escape.empty())
      out.append(text.substr(i, n));
    else
      out += escape;
    i += n == 0 ? 1 : n;
  }
  return out;
}

}  // namespace sdpa
