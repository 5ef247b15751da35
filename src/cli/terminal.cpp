#include "cli/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "model/number_text.h"

namespace sdpa {
namespace {

constexpr std::size_t kPipedWidth = 120;
constexpr std::size_t kUnknownTerminalWidth = 80;
constexpr int64_t kWidestTerminal = 100000;

std::optional<std::string> environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::optional<std::string>(value) : std::nullopt;
}

}  // namespace

TextStyle text_style_for(const TerminalFacts& facts) {
  TextStyle style;
  const std::optional<int64_t> columns =
      facts.columns_env ? decimal_integer(*facts.columns_env) : std::nullopt;
  if (columns && *columns > 0 && *columns <= kWidestTerminal)
    style.width = static_cast<std::size_t>(*columns);
  else if (facts.is_terminal)
    style.width = facts.terminal_columns > 0 ? static_cast<std::size_t>(facts.terminal_columns)
                                             : kUnknownTerminalWidth;
  else
    style.width = kPipedWidth;
  style.colour = facts.is_terminal && (!facts.no_color_env || facts.no_color_env->empty()) &&
                 facts.term_env.value_or("") != "dumb";
  return style;
}

TerminalFacts terminal_facts(int fd) {
  TerminalFacts facts;
  facts.is_terminal = ::isatty(fd) == 1;
  winsize size{};
  if (facts.is_terminal && ::ioctl(fd, TIOCGWINSZ, &size) == 0)
    facts.terminal_columns = size.ws_col;
  facts.columns_env = environment("COLUMNS");
  facts.no_color_env = environment("NO_COLOR");
  facts.term_env = environment("TERM");
  return facts;
}

}  // namespace sdpa
