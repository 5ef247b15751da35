// Text from files and other processes made safe to print: a control character in a backend or
// device name must not set a terminal's title, clear its screen or forge a table row.
#pragma once

#include <string>
#include <string_view>

namespace sdpa {

// `text` with every C0 control character, DEL and C1 control character (U+0080-U+009F) written
// as an escape: "\n", "\r", "\t", "\x1b", "\u009b". Valid UTF-8 stays as it is; an invalid byte
// becomes "\xNN" too. Linear in the text.
std::string printable_text(std::string_view text);

// Whether printable_text() would return `text` unchanged.
bool is_printable_text(std::string_view text);

}  // namespace sdpa
