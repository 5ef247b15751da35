#include "report/finding_groups.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "model/clocks.h"
#include "model/roofline.h"
#include "report/finding_parts.h"

namespace sdpa {
namespace {

constexpr std::size_t kIndent = 2;
constexpr std::size_t kHang = 4;

// A problem's label in parts: B8 H16 Hkv16 S1024 Skv1024 D64 bf16 causal contiguous.
std::vector<std::string> label_parts(const Problem& p) {
  return {fmt::format("B{}", p.batch),     fmt::format("H{}", p.heads),     fmt::format("Hkv{}", p.kv_heads),
          fmt::format("S{}", p.seq_q),     fmt::format("Skv{}", p.seq_kv),  fmt::format("D{}", p.head_dim),
          dtype_name(p.dtype),             p.causal ? "causal" : "not causal",
          p.paged() ? fmt::format("page{}", p.page_size) : "contiguous"};
}

// Which parts of the label differ between the run's cases. Hkv and Skv count only where some
// case has them apart from H and S.
std::vector<bool> varying_parts(const RunReport& report) {
  std::vector<bool> varies(label_parts(Problem{}).size(), false);
  if (report.cases.empty()) return varies;
  const std::vector<std::string> first = label_parts(report.cases.front().problem);
  bool grouped_heads = false;
  bool own_kv_length = false;
  for (const CaseResult& c : report.cases) {
    const std::vector<std::string> parts = label_parts(c.problem);
    for (std::size_t i = 0; i < parts.size(); ++i) varies[i] = varies[i] || parts[i] != first[i];
    grouped_heads = grouped_heads || c.problem.kv_heads != c.problem.heads;
    own_kv_length = own_kv_length || c.problem.seq_kv != c.problem.seq_q;
  }
  varies[2] = varies[2] && grouped_heads;
  varies[4] = varies[4] && own_kv_length;
  return varies;
}

std::string short_label(const Problem& p, const std::vector<bool>& varies) {
  const std::vector<std::string> parts = label_parts(p);
  std::string label;
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (varies[i]) label += (label.empty() ? "" : " ") + parts[i];
  return label;
}

// A library kernel's low occupancy: the finding names one of the case's cuBLAS or cuDNN kernels.
bool library_occupancy(const Finding& f, const CaseResult& c) {
  if (f.rule != "low-occupancy" || !c.profile) return false;
  return std::any_of(c.profile->kernels.begin(), c.profile->kernels.end(), [&](const KernelProfile& k) {
    return library_kernel(k.name) && f.text.find(k.name) != std::string::npos;
  });
}

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(' ', start), text.size());
    if (end > start) words.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

std::string joined(const std::vector<std::string>& words, std::size_t from, std::size_t to) {
  std::string text;
  for (std::size_t i = from; i < to; ++i) text += (text.empty() ? "" : " ") + words[i];
  return text;
}

// Every bracket in `text` closed: a clause boundary is never inside a template's or a note's brackets.
bool balanced(std::string_view text) {
  int depth = 0;
  for (const char c : text) {
    depth += (c == '(' || c == '<') ? 1 : (c == ')' || c == '>') ? -1 : 0;
    if (depth < 0) return false;
  }
  return depth == 0;
}

// The words every figure of a group starts and ends with move into its head, cut only where a
// clause starts (after a comma, or at a parenthesis), so that the figures keep only what differs:
// "1 per forward, 256.0 MiB, 126.7 us each (why)" -> head "1 per forward (why)", "256.0 MiB, 126.7 us each".
void move_shared_words(FindingGroup& g) {
  std::vector<std::vector<std::string>> words;
  std::size_t shortest = std::string::npos;
  for (const auto& [label, figure] : g.figures) {
    words.push_back(words_of(figure));
    shortest = std::min(shortest, words.back().size());
  }
  const auto same_at = [&](auto index_of) {
    return std::all_of(words.begin(), words.end(), [&](const auto& w) { return w[index_of(w)] == words[0][index_of(words[0])]; });
  };
  std::size_t prefix = 0;
  while (prefix < shortest && same_at([&](const auto&) { return prefix; })) ++prefix;
  if (prefix == shortest && words[0].size() == shortest) return;  // one figure for every shape
  std::size_t suffix = 0;
  while (suffix + prefix < shortest && same_at([&](const auto& w) { return w.size() - 1 - suffix; })) ++suffix;
  const std::vector<std::string>& first = words[0];
  while (prefix > 0 && !(first[prefix - 1].ends_with(',') && balanced(joined(first, 0, prefix)))) --prefix;
  const auto clause_starts = [&](std::size_t from_end) {
    if (!balanced(joined(first, first.size() - from_end, first.size()))) return false;
    return first[first.size() - from_end].starts_with('(') || std::all_of(words.begin(), words.end(), [&](const auto& w) {
             return w[w.size() - from_end - 1].ends_with(',');
           });
  };
  while (suffix > 0 && !clause_starts(suffix)) --suffix;
  if (prefix + suffix == shortest || (prefix == 0 && suffix == 0)) return;  // a figure would be left empty

  std::string shared = joined(words[0], 0, prefix);
  if (!shared.empty()) shared.pop_back();  // the clause's comma
  if (suffix > 0) {
    const std::string tail = joined(words[0], words[0].size() - suffix, words[0].size());
    shared += shared.empty() ? tail : (tail.starts_with('(') ? " " : ", ") + tail;
  }
  g.head += (shared.starts_with('(') ? " " : ": ") + shared;
  for (std::size_t i = 0; i < g.figures.size(); ++i) {
    std::string& figure = g.figures[i].second;
    figure = joined(words[i], prefix, words[i].size() - suffix);
    if (figure.ends_with(',')) figure.pop_back();
  }
}

std::string group_line(const FindingGroup& g) {
  const bool one_figure = std::all_of(g.figures.begin(), g.figures.end(),
                                      [&](const auto& f) { return f.second == g.figures.front().second; });
  std::string line = g.backend + ": " + g.head;
  const std::string& figure = g.figures.front().second;
  if (one_figure) {
    line += figure.empty() ? "" : ": " + figure;
    if (g.every_case || g.figures.front().first.empty()) return line;
    std::string labels;
    for (const auto& [label, ignored] : g.figures) labels += (labels.empty() ? "" : ", ") + label;
    return line + " (" + labels + ")";
  }
  std::string figures;
  for (const auto& [label, text] : g.figures)
    figures += (figures.empty() ? "" : "; ") + (label.empty() ? text : label + " " + text);
  return line + ": " + figures;
}

}  // namespace

std::vector<FindingGroup> group_findings(const RunReport& report, bool everything) {
  const std::vector<bool> varies = varying_parts(report);
  std::vector<FindingGroup> groups;
  for (const CaseResult& c : report.cases) {
    std::vector<Finding> findings = c.timing ? clock_findings(*c.timing) : std::vector<Finding>{};
    if (const std::optional<Ceilings>& ceilings = report.environment.ceilings; ceilings && c.timing) {
      const int sm_count = report.environment.device ? report.environment.device->sm_count : 0;
      for (Finding& f : bandwidth_findings(c, *ceilings, sm_count)) findings.push_back(std::move(f));
    }
    if (c.profile) findings.insert(findings.end(), c.profile->findings.begin(), c.profile->findings.end());
    for (const Finding& f : findings) {
      if (!everything && library_occupancy(f, c)) continue;
      const FindingParts parts =
          finding_parts(f, c.profile ? &*c.profile : nullptr, c.problem.pass, !everything);
      const std::string head = parts.why.empty() ? parts.what : parts.what + " " + parts.why;
      const std::string& figure = parts.figure;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const FindingGroup& g) {
        return g.backend == c.backend && g.rule == f.rule && g.head == head;
      });
      if (it == groups.end()) it = groups.insert(groups.end(), FindingGroup{c.backend, f.rule, head, {}, false});
      it->figures.emplace_back(short_label(c.problem, varies), figure);
    }
  }
  for (FindingGroup& g : groups) {
    const auto cases = std::count_if(report.cases.begin(), report.cases.end(),
                                     [&](const CaseResult& c) { return c.backend == g.backend; });
    g.every_case = static_cast<std::size_t>(cases) == g.figures.size();
    if (g.figures.size() > 1) move_shared_words(g);
  }
  return groups;
}

std::string format_findings(const RunReport& report, const TextStyle& style, bool everything) {
  std::string out;
  for (const FindingGroup& g : group_findings(report, everything)) out += wrap(group_line(g), style.width, kIndent, kHang);
  return out.empty() ? out : "\nfindings:\n" + out;
}

}  // namespace sdpa
