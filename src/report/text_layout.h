// Text for a terminal of a known width: display widths of UTF-8 text, padding, names shortened
// in the middle, paragraphs wrapped with a hanging indent, colour as ANSI SGR sequences.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sdpa {

// How text output is laid out: the terminal's width in columns and whether it takes colour.
// The defaults are what piped output (a file, `| less`) gets when COLUMNS is not set.
struct TextStyle {
  std::size_t width = 120;
  bool colour = false;
};

// What a piece of text means, for colour: the best backend, a good or bad change, a failure, a
// skip, secondary text. `plain` is never painted.
enum class Tone { plain, best, good, bad, warn, dim };

// Columns the text takes: UTF-8 code points, ANSI escape sequences counting zero.
std::size_t display_width(std::string_view text);

// `text` padded with spaces to `width` columns, on the left when `right` (never cut).
std::string pad(std::string_view text, std::size_t width, bool right = false);

// `name` in at most `width` columns: the start and the end kept, the middle replaced by "…",
// cut only between words (an identifier or a snake_case part of one: "nvjet_sm90_tst_…coopA_TNT"),
// never inside one, so the name's own end is always shown whole.
std::string shorten_middle(std::string_view name, std::size_t width);

// `text` broken at spaces into lines of at most `width` columns: the first line indented by
// `indent` spaces, the rest by `indent + hang`. A word longer than a line is broken where it
// must be. Every line ends with '\n'.
std::string wrap(std::string_view text, std::size_t width, std::size_t indent, std::size_t hang);

// `text` in the tone's colour when `colour` is on; as it is otherwise.
std::string paint(std::string_view text, Tone tone, bool colour);

}  // namespace sdpa
