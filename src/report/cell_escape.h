// Cells of the files people open elsewhere: a Markdown table in a pull-request comment and a CSV
// in a spreadsheet. Text from a result file must stay inside its cell and run nothing.
#pragma once

#include <string>
#include <string_view>

namespace sdpa {

// Control characters escaped (printable_text), '|' as "\|", and '<', '>', '&' as HTML entities:
// no raw HTML, no second row or heading forged from a device name.
std::string markdown_cell(std::string_view text);

// A CSV field (RFC 4180): quoted when it holds a comma, a quote, LF or CR. A text that is not a
// number and starts with = + - @ TAB or CR is a formula to a spreadsheet: it is quoted and
// prefixed with ' (OWASP's advice), so "-1.5" stays a number and "=cmd|..." is text.
std::string csv_field(std::string_view text);

}  // namespace sdpa
