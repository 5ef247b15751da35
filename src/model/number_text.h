// Numbers from text given by people: decimal only, range-checked, NaN and infinity refused, and
// one message style ("--threshold: expected a number > 0, got 'abc'").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sdpa {

std::optional<int64_t> decimal_integer(std::string_view text);  // "-12", "1024"; not "0x10", " 1"
std::optional<uint64_t> decimal_unsigned(std::string_view text);
std::optional<double> finite_number(std::string_view text);     // "0.5", "1e3"; not "nan", "inf"

// The value of `what` (a flag or key) as an integer in [low, high]; throws InputError.
int64_t integer_in(std::string_view what, std::string_view text, int64_t low, int64_t high);
// The value of `what` as a finite number above `low` (or at least `low` when `inclusive`).
double number_above(std::string_view what, std::string_view text, double low, bool inclusive = false);

// 'text', shortened when long: what an error message may echo of a hostile value.
std::string echo(std::string_view text);

// A command's words joined as a shell reads them back: a word with a space or a quote in quotes.
std::string command_line_text(const std::vector<std::string>& words);

}  // namespace sdpa
