// The printers' escaping on any text, as a result file's or a traced process's strings reach a
// terminal (printable_text), a Markdown pull-request comment (markdown_cell) and a spreadsheet
// (csv_field). Each property below is what keeps a hostile string inside its cell; a broken one
// aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "model/printable_text.h"
#include "report/cell_escape.h"

namespace {

bool has_control_character(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) return true;
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F) return true;
  }
  return false;
}

// The text of one CSV field as a spreadsheet reads it back; aborts on a field that is not one.
std::string csv_read_back(std::string_view field) {
  if (field.empty() || field.front() != '"') {
    if (field.find_first_of(",\"\n\r") != std::string_view::npos) std::abort();
    return std::string(field);
  }
  if (field.size() < 2 || field.back() != '"') std::abort();
  std::string text;
  for (std::size_t i = 1; i + 1 < field.size(); ++i) {
    text += field[i];
    if (field[i] == '"') {
      if (field[i + 1] != '"') std::abort();  // a lone quote would end the field early
      ++i;
    }
  }
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  const std::string printable = sdpa::printable_text(text);
  if (has_control_character(printable)) std::abort();
  if (sdpa::printable_text(printable) != printable || !sdpa::is_printable_text(printable)) std::abort();

  const std::string cell = sdpa::markdown_cell(text);
  if (has_control_character(cell) || cell.find_first_of("<>") != std::string::npos) std::abort();
  for (std::size_t i = 0; i < cell.size(); ++i)
    if (cell[i] == '|' && (i == 0 || cell[i - 1] != '\\')) std::abort();  // would end the cell

  const std::string field = sdpa::csv_field(text);
  const std::string back = csv_read_back(field);
  const bool formula = !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos;
  if (back != text && !(formula && back == "'" + std::string(text))) std::abort();  // the text, or it neutralised
  if (!back.empty() && (back.front() == '=' || back.front() == '@' || back.front() == '\t' || back.front() == '\r'))
    std::abort();  // a formula a spreadsheet would run
  return 0;
}
