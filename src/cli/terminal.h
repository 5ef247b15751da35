// The terminal in front of an output: how wide it is and whether it takes colour. Read here, at
// the edge, so the printers get plain numbers and stay testable.
#pragma once

#include <optional>
#include <string>

#include "report/text_layout.h"

namespace sdpa {

// What the environment says about an output.
struct TerminalFacts {
  bool is_terminal = false;
  int terminal_columns = 0;                 // the tty's size; 0 when unknown
  std::optional<std::string> columns_env;   // $COLUMNS
  std::optional<std::string> no_color_env;  // $NO_COLOR
  std::optional<std::string> term_env;      // $TERM
};

// The width: $COLUMNS when it is a positive integer, else the terminal's size, else 120 when the
// output is not a terminal (a file, a pipe: stable output) and 80 for a terminal of unknown size.
// Colour: only on a terminal, never with NO_COLOR set to anything but "" (no-color.org), never
// for TERM=dumb.
TextStyle text_style_for(const TerminalFacts& facts);

// The facts of file descriptor `fd` (isatty, TIOCGWINSZ) and of this process's environment.
TerminalFacts terminal_facts(int fd);

}  // namespace sdpa
