#include "report/text_layout.h"

#include <algorithm>
#include <vector>

namespace sdpa {
namespace {

constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // U+2026, one column
constexpr std::size_t kNarrowestLine = 16;  // what wrap() keeps when the indent eats the width

bool is_continuation_byte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Part of an identifier: letters, digits and any non-ASCII byte (never split inside a code point).
bool is_word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z');
}

// Whether a shortened name may be cut just before name[i]: not inside a run of letters and
// digits, and not between an identifier's leading underscores and the rest of it (__nv_bfloat16).
bool may_cut_before(std::string_view name, std::size_t i) {
  if (is_word_byte(name[i - 1]) && is_word_byte(name[i])) return false;
  if (name[i - 1] != '_' || !(is_word_byte(name[i]) || name[i] == '_')) return true;
  std::size_t run = i - 1;  // the underscore run that ends at i - 1
  while (run > 0 && name[run - 1] == '_') --run;
  return run > 0 && is_word_byte(name[run - 1]);
}

// Bytes of the longest prefix of `text` that takes at most `columns` columns.
std::size_t prefix_bytes(std::string_view text, std::size_t columns) {
  std::size_t used = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_continuation_byte(text[i])) continue;
    if (used == columns) return i;
    ++used;
  }
  return text.size();
}

}  // namespace

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= '@' && text[i] <= '~')) ++i;  // up to the final byte
      continue;
    }
    if (!is_continuation_byte(text[i])) ++width;
  }
  return width;
}

std::string pad(std::string_view text, std::size_t width, bool right) {
  const std::size_t used = display_width(text);
  const std::string fill(used < width ? width - used : 0, ' ');
  return right ? fill + std::string(text) : std::string(text) + fill;
}

std::string shorten_middle(std::string_view name, std::size_t width) {
  if (display_width(name) <= width) return std::string(name);
  if (width <= 1) return width == 0 ? std::string() : std::string(kEllipsis);
  const std::size_t budget = width - 1;  // columns left beside the ellipsis
  const std::size_t n = name.size();

  std::vector<std::size_t> cuts{0};
  for (std::size_t i = 1; i < n; ++i)
    if (may_cut_before(name, i)) cuts.push_back(i);
  cuts.push_back(n);
  std::vector<std::size_t> columns_before(n + 1, 0);  // display width of name[0, i)
  for (std::size_t i = 0; i < n; ++i)
    columns_before[i + 1] = columns_before[i] + (is_continuation_byte(name[i]) ? 0 : 1);
  const std::size_t total = columns_before[n];

  // Keep as much as fits; the end keeps at least a quarter of the room when it can, since the
  // end of a kernel name (its types, its variant) is what tells two kernels apart.
  std::size_t best_head = 0;
  std::size_t best_tail = n;
  bool found = false;
  for (const std::size_t least_tail : {budget / 4, std::size_t{0}}) {
    std::size_t best_kept = 0;
    for (const std::size_t head : cuts) {
      if (head == 0) continue;
      if (columns_before[head] > budget) break;  // ascending: no later head fits either
      // The first cut at or after `head` whose end fits beside it is the longest end: found by
      // bisection, so a name of a megabyte with a cut every few bytes costs a moment.
      const std::size_t least_start = total - (budget - columns_before[head]);  // columns before the end
      const auto it = std::lower_bound(cuts.begin(), cuts.end(), head, [&](std::size_t cut, std::size_t h) {
        return cut < h || columns_before[cut] < least_start;
      });
      if (it == cuts.end()) continue;
      const std::size_t tail = *it;
      const std::size_t tail_columns = total - columns_before[tail];
      if (tail_columns < least_tail) continue;
      const std::size_t kept = columns_before[head] + tail_columns;
      if (kept > best_kept || (kept == best_kept && head > best_head)) {
        best_kept = kept;
        best_head = head;
        best_tail = tail;
        found = true;
      }
    }
    if (found) break;
  }
  if (!found) {
    // The first identifier alone is wider than the room: cut it, and keep the name's end whole
    // when that leaves room for half of the width.
    best_tail = n;
    for (const std::size_t tail : cuts)
      if (tail > 0 && total - columns_before[tail] <= budget / 2) {
        best_tail = tail;
        break;
      }
    best_head = prefix_bytes(name, budget - (total - columns_before[best_tail]));
  }
  // A space beside the ellipsis only takes room: "flash_fwd_…2>, __nv_bfloat16, true>".
  std::string_view head = name.substr(0, best_head);
  std::string_view tail = name.substr(best_tail);
  while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
  while (!tail.empty() && tail.front() == ' ') tail.remove_prefix(1);
  return std::string(head) + std::string(kEllipsis) + std::string(tail);
}

std::string wrap(std::string_view text, std::size_t width, std::size_t indent, std::size_t hang) {
  std::string out;
  std::string line;
  std::size_t line_columns = 0;
  std::size_t margin = indent;
  const auto room = [&] {
    return width > margin + kNarrowestLine ? width - margin : kNarrowestLine;
  };
  const auto flush = [&] {
    out += std::string(margin, ' ') + line + '\n';
    line.clear();
    line_columns = 0;
    margin = indent + hang;
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find_first_of(" \n", start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(start, end - start);
    std::size_t word_columns = display_width(word);  // kept as pieces are cut: a long word costs its length once
    while (!word.empty()) {
      if (line_columns > 0 && line_columns + 1 + word_columns <= room()) {
        line += ' ';
        line += word;
        line_columns += 1 + word_columns;
        break;
      }
      if (line_columns > 0) flush();
      if (word_columns <= room()) {
        line = std::string(word);
        line_columns = word_columns;
        break;
      }
      const std::size_t piece = prefix_bytes(word, room());
      line = std::string(word.substr(0, piece));
      line_columns = room();
      word_columns -= std::min(word_columns, display_width(word.substr(0, piece)));
      word.remove_prefix(piece);
    }
    if (end < text.size() && text[end] == '\n' && line_columns > 0) flush();
    start = end + 1;
  }
  if (line_columns > 0 || out.empty()) flush();
  return out;
}

std::string paint(std::string_view text, Tone tone, bool colour) {
  const char* code = nullptr;
  switch (tone) {
    case Tone::plain:
      break;
    case Tone::best:
      code = "1;32";
      break;
    case Tone::good:
      code = "32";
      break;
    case Tone::bad:
      code = "1;31";
      break;
    case Tone::warn:
      code = "33";
      break;
    case Tone::dim:
      code = "2";
      break;
  }
  if (!colour || code == nullptr || text.empty()) return std::string(text);
  return std::string("\x1b[") + code + "m" + std::string(text) + "\x1b[0m";
}

}  // namespace sdpa
