#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "model/case_key.h"
#include "model/clocks.h"
#include "report/finding_groups.h"
#include "report/report.h"
#include "report/summary.h"
#include "report/table_columns.h"
#include "report/text_layout.h"

namespace sdpa {
namespace {

constexpr std::size_t kNotRunHang = 4;

// The median and its relative spread: "0.637 ±0.3%", '*' when sampling stopped before reaching
// the noise target. Everything said about one time (a clock marker too) belongs in this cell.
std::string time_cell(const CaseResult& c, const TableContext&) {
  if (!c.timing) return "-";
  const TimingStats& t = *c.timing;
  std::string text = fmt::format("{:.3f}", t.median_ms);
  if (const char marker = clock_marker(t); marker != '\0') text += marker;
  if (t.relative_spread >= 0)
    text += fmt::format(" \xC2\xB1{:.1f}%{}", 100 * t.relative_spread, t.converged ? "" : "*");
  return text;
}

std::string status_cell(const CaseResult& c, const TableContext&) {
  return status_name(c.status);
}

Tone status_tone(const CaseResult& c, const TableContext&) {
  switch (c.status) {
    case CaseStatus::ok:
      return Tone::plain;
    case CaseStatus::failed:
      return Tone::bad;
    case CaseStatus::skipped:
      return Tone::warn;
  }
  return Tone::plain;
}

Tone best_tone(const CaseResult& c, const TableContext& t) {
  return t.is_best(c) ? Tone::best : Tone::plain;
}

std::string verified_cell(const CaseResult& c, const TableContext&) {
  if (!c.verification) return "-";
  return fmt::format("{} {:.1e}", c.verification->passed ? "yes" : "NO",
                     c.verification->rel_l2_error);
}

Tone verified_tone(const CaseResult& c, const TableContext&) {
  return c.verification && !c.verification->passed ? Tone::bad : Tone::plain;
}

std::string peak_legend(const TableContext& t) {
  const std::optional<Ceilings>& ceilings = t.report().environment.ceilings;
  if (!ceilings) return "%peak: against this GPU's measured GEMM ceiling (none recorded)";
  const std::string compute = fmt::format("this GPU's measured {:.1f} TFLOP/s bf16 GEMM ceiling ({:.1f} fp16)",
                                          ceilings->bf16_gemm_tflops, ceilings->fp16_gemm_tflops);
  if (ceilings->read_tb_per_s <= 0) return "%peak: of " + compute;
  return fmt::format(
      "%peak: the ceiling that bounds the case, "
      "by its FLOPs per byte a {} must move against the ridge point ({:.0f} bf16): "
      "cmp of {}, "
      "mem of the measured {:.2f} TB/s HBM read ceiling (the minimum bytes per second)",
      t.call_name(), compute_ceiling_tflops(*ceilings, DType::bf16) / ceilings->read_tb_per_s,
      compute, ceilings->read_tb_per_s);
}

std::string backend_cell(const CaseResult& c, const TableContext&) {
  return c.backend;
}
std::string shape_cell(const CaseResult& c, const TableContext&) {
  return c.problem.shape_label();
}
std::string dtype_cell(const CaseResult& c, const TableContext&) {
  return dtype_name(c.problem.dtype);
}
std::string causal_cell(const CaseResult& c, const TableContext&) {
  return c.problem.causal ? "yes" : "no";
}
std::string reason_cell(const CaseResult& c, const TableContext&) {
  return c.reason;
}

std::string tflops_cell(const CaseResult& c, const TableContext&) {
  return c.timing ? fmt::format("{:.1f}", c.tflops()) : "-";
}

std::string peak_cell(const CaseResult& c, const TableContext& t) {
  const std::optional<PeakShare> share = t.peak_share(c);
  if (!share) return "-";
  if (share->ridge <= 0) return fmt::format("{:.0f}%", share->percent);  // no read ceiling: compute alone
  return fmt::format("{:.0f}% {}", share->percent, share->ceiling == Ceiling::read_bandwidth ? "mem" : "cmp");
}

std::string vs_best_cell(const CaseResult& c, const TableContext& t) {
  return c.timing && t.fastest_ms(c) > 0
             ? fmt::format("{:.2f}x", c.timing->median_ms / t.fastest_ms(c))
             : "-";
}

std::string kernels_cell(const CaseResult& c, const TableContext&) {
  return c.profile ? fmt::format("{:g}", c.profile->kernels_per_forward()) : "-";
}

std::string memcpys_cell(const CaseResult& c, const TableContext&) {
  return c.profile ? fmt::format("{:g}", c.profile->memcpys_per_forward()) : "-";
}

std::string host_cell(const CaseResult& c, const TableContext&) {
  return c.host && c.host->calls > 0 ? fmt::format("{:.1f}", c.host->per_call_us) : "-";
}

std::string dominant_kernel_cell(const CaseResult& c, const TableContext&) {
  const KernelProfile* top = c.profile ? c.profile->dominant_kernel() : nullptr;
  return top ? kernel_display_name(*top) : "-";
}

std::string dominant_occupancy_cell(const CaseResult& c, const TableContext&) {
  const KernelProfile* top = c.profile ? c.profile->dominant_kernel() : nullptr;
  return top ? occupancy_cell(*top) : "-";
}

// The dominant kernel's measured occupancy and whether the forward is DRAM- or compute-bound.
std::string achieved_cell(const CaseResult& c, const TableContext&) {
  const KernelProfile* top = c.profile ? c.profile->dominant_kernel() : nullptr;
  const std::optional<double> achieved = top ? counter_value(top->counters, CounterRole::achieved_occupancy) : std::nullopt;
  const std::optional<ForwardBound> bound = c.profile ? forward_bound(*c.profile) : std::nullopt;
  if (!achieved && !bound) return "-";
  return fmt::format("{} {}", achieved ? fmt::format("{:.1f}%", *achieved) : "-",
                     bound ? (bound->bound == Bound::dram ? "DRAM" : "compute") : "-");
}

std::string achieved_legend(const TableContext& t) {
  const auto& cases = t.report().cases;
  if (std::none_of(cases.begin(), cases.end(), [](const CaseResult& c) { return c.profile && c.profile->counters; }))
    return "";
  return "achieved: measured occupancy of the kernel with the most GPU time, and whether the forward is DRAM- or "
         "compute-bound (DRAM against SM throughput, % of peak)";
}

std::string time_legend(const TableContext& t) {
  return fmt::format(
      "median ms: GPU time of one {} \xC2\xB1 the median's 95% interval (* not converged)",
      t.call_name());
}
std::string kernels_legend(const TableContext& t) {
  return fmt::format("kern: kernels per {}", t.call_name());
}
std::string memcpys_legend(const TableContext& t) {
  return fmt::format("cpy: memcpys per {}", t.call_name());
}
std::string host_legend(const TableContext&) {
  return "host us: CPU time of one call (launches only)";
}
std::string occupancy_legend(const TableContext&) {
  return "occupancy: theoretical, of the kernel with the most GPU time, and what limits it";
}

const std::vector<TableColumn> kColumns = {
    {.id = "backend",
     .header = "backend",
     .title = "backend",
     .compact = Compact::yes,
     .max_width = 64,  // the range grammar's longest backend; a longer one from a file is cut in the middle
     .cell = backend_cell,
     .tone = best_tone},
    {.id = "shape",
     .header = "shape",
     .title = "shape",
     .compact = Compact::yes,
     .cell = shape_cell},
    {.id = "dtype",
     .header = "dtype",
     .title = "dtype",
     .compact = Compact::yes,
     .drop_order = 1,
     .foldable = true,
     .cell = dtype_cell},
    {.id = "causal",
     .header = "causal",
     .title = "causal",
     .compact = Compact::when_varies,
     .drop_order = 2,
     .foldable = true,
     .cell = causal_cell},
    {.id = "time",
     .header = "median ms",
     .title = "median ms \xC2\xB1 spread",
     .right_aligned = true,
     .compact = Compact::yes,
     .cell = time_cell,
     .tone = best_tone,
     .legend = time_legend},
    {.id = "tflops",
     .header = "TFLOP/s",
     .title = "TFLOP/s",
     .right_aligned = true,
     .compact = Compact::yes,
     .drop_order = 8,
     .cell = tflops_cell},
    {.id = "peak",
     .header = "%peak",
     .title = "% of peak",
     .right_aligned = true,
     .compact = Compact::yes,
     .drop_order = 4,
     .cell = peak_cell,
     .legend = peak_legend},
    {.id = "vs-best",
     .header = "vs best",
     .title = "vs best",
     .right_aligned = true,
     .compact = Compact::yes,
     .drop_order = 7,
     .cell = vs_best_cell},
    {.id = "kernels",
     .header = "kern",
     .title = "kernels / forward",
     .right_aligned = true,
     .compact = Compact::yes,
     .drop_order = 6,
     .cell = kernels_cell,
     .legend = kernels_legend},
    {.id = "memcpys",
     .header = "cpy",
     .title = "memcpys / forward",
     .right_aligned = true,
     .compact = Compact::yes,
     .drop_order = 3,
     .cell = memcpys_cell,
     .legend = memcpys_legend},
    {.id = "host",
     .header = "host us",
     .title = "host us / call",
     .right_aligned = true,
     .cell = host_cell,
     .legend = host_legend},
    {.id = "kernel",
     .header = "dominant kernel",
     .title = "dominant kernel",
     .max_width = 32,
     .cell = dominant_kernel_cell},
    {.id = "occupancy",
     .header = "occupancy",
     .title = "occupancy",
     .compact = Compact::yes,
     .drop_order = 5,
     .cell = dominant_occupancy_cell,
     .legend = occupancy_legend},
    {.id = "achieved",
     .header = "achieved",
     .title = "achieved occupancy, bound",
     .compact = Compact::when_varies,
     .drop_order = 1,
     .cell = achieved_cell,
     .legend = achieved_legend},
    {.id = "verified",
     .header = "verified",
     .title = "verified (rel L2)",
     .cell = verified_cell,
     .tone = verified_tone},
    {.id = "status",
     .header = "status",
     .title = "status",
     .compact = Compact::yes,
     .cell = status_cell,
     .tone = status_tone},
    {.id = "reason", .header = "reason", .title = "reason", .cell = reason_cell},
};

bool all_rows_same(const TableColumn& column, const TableContext& t) {
  std::set<std::string> values;
  for (const CaseResult& c : t.report().cases) values.insert(column.cell(c, t));
  return values.size() <= 1;
}

std::size_t column_width(const TableColumn& column, const TableContext& t) {
  std::size_t width = display_width(column.header);
  for (const CaseResult& c : t.report().cases) {
    const std::size_t cell = display_width(column.cell(c, t));
    width = std::max(width, column.max_width > 0 ? std::min(cell, column.max_width) : cell);
  }
  return width;
}

// Two spaces after text, whose cells hold spaces of their own; one after numbers.
std::size_t gap_after(const TableColumn& column) {
  return column.right_aligned ? 1 : 2;
}

bool all_rows_empty(const TableColumn& column, const TableContext& t) {
  return std::all_of(t.report().cases.begin(), t.report().cases.end(),
                     [&](const CaseResult& c) { return column.cell(c, t) == "-"; });
}

struct Layout {
  std::vector<const TableColumn*> shown;
  std::vector<const TableColumn*> folded;  // every row the same: said in one line
  std::vector<const TableColumn*> empty;   // no row has a value (no profile, no ceilings)
  std::vector<const TableColumn*> hidden;  // left out to fit the width
};

std::size_t layout_width(const std::vector<const TableColumn*>& columns, const TableContext& t) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < columns.size(); ++i)
    width += column_width(*columns[i], t) + (i + 1 < columns.size() ? gap_after(*columns[i]) : 0);
  return width;
}

Layout choose_columns(const TableOptions& options, const TableContext& t) {
  Layout layout;
  if (options.choice == ColumnChoice::listed) {
    for (const std::string& id : options.columns)
      if (const TableColumn* c = find_table_column(id)) layout.shown.push_back(c);
    return layout;
  }
  const bool any_reason = std::any_of(t.report().cases.begin(), t.report().cases.end(),
                                      [](const CaseResult& c) { return !c.reason.empty(); });
  for (const TableColumn& c : kColumns) {
    const bool same = all_rows_same(c, t);
    if (options.choice == ColumnChoice::wide) {
      if (c.id != "reason" || any_reason) layout.shown.push_back(&c);
      continue;
    }
    if (c.drop_order > 0 && !t.report().cases.empty() && all_rows_empty(c, t)) {
      if (c.compact == Compact::yes) layout.empty.push_back(&c);  // a column shown only when it varies leaves quietly
    } else if (c.compact == Compact::yes || (c.compact == Compact::when_varies && !same)) {
      layout.shown.push_back(&c);
    } else if (c.foldable && same && !t.report().cases.empty()) {
      layout.folded.push_back(&c);
    }
  }
  if (options.choice == ColumnChoice::wide) return layout;

  // Too wide: columns leave one by one, those that say one value for every row first.
  const auto leaves_before = [&](const TableColumn* a, const TableColumn* b) {
    const bool a_same = a->foldable && all_rows_same(*a, t);
    const bool b_same = b->foldable && all_rows_same(*b, t);
    if (a_same != b_same) return a_same;
    return a->drop_order < b->drop_order;
  };
  while (layout_width(layout.shown, t) > options.style.width) {
    const TableColumn* leaving = nullptr;
    for (const TableColumn* c : layout.shown)
      if (c->drop_order > 0 && (leaving == nullptr || leaves_before(c, leaving))) leaving = c;
    if (leaving == nullptr) break;
    layout.shown.erase(std::find(layout.shown.begin(), layout.shown.end(), leaving));
    const bool same = leaving->foldable && all_rows_same(*leaving, t);
    (same ? layout.folded : layout.hidden).push_back(leaving);
  }
  const auto in_table_order = [](const TableColumn* a, const TableColumn* b) { return a < b; };
  std::sort(layout.folded.begin(), layout.folded.end(), in_table_order);
  std::sort(layout.hidden.begin(), layout.hidden.end(), in_table_order);
  return layout;
}

std::string table_rows(const Layout& layout, const TableContext& t, const TextStyle& style) {
  std::vector<std::size_t> widths;
  for (const TableColumn* c : layout.shown) widths.push_back(column_width(*c, t));
  const auto line = [&](auto cell_of) {
    std::string text;
    for (std::size_t i = 0; i < layout.shown.size(); ++i) {
      const TableColumn& c = *layout.shown[i];
      const bool last = i + 1 == layout.shown.size();
      const std::string cell = cell_of(c, widths[i]);
      text += last && !c.right_aligned ? cell : pad(cell, widths[i], c.right_aligned);
      if (!last) text += std::string(gap_after(c), ' ');
    }
    text.erase(text.find_last_not_of(' ') + 1);  // an empty last cell leaves no trailing spaces
    return text + "\n";
  };
  std::string out = line([](const TableColumn& c, std::size_t) { return std::string(c.header); });
  for (const CaseResult& row : t.report().cases)
    out += line([&](const TableColumn& c, std::size_t width) {
      std::string text = c.cell(row, t);
      if (c.max_width > 0) text = shorten_middle(text, std::min(width, c.max_width));
      return paint(text, c.tone ? c.tone(row, t) : Tone::plain, style.colour);
    });
  return out;
}

// Under the table: what every row shares, what was left out to fit, what the columns mean.
std::string table_notes(const Layout& layout, const TableContext& t, const TableOptions& options) {
  const auto headers = [](const std::vector<const TableColumn*>& columns) {
    std::string names;
    for (const TableColumn* c : columns)
      names += (names.empty() ? "" : ", ") + std::string(c->header);
    return names;
  };
  std::vector<std::string> clauses;
  if (!layout.folded.empty() && !t.report().cases.empty()) {
    std::string values;
    for (const TableColumn* c : layout.folded) {
      const std::string value = c->cell(t.report().cases.front(), t);
      values +=
          (values.empty() ? "" : ", ") +
          (c->id == "causal" ? (value == "yes" ? std::string("causal") : "not causal") : value);
    }
    clauses.push_back("every case: " + values);
  }
  if (!layout.empty.empty()) clauses.push_back("no value in any case: " + headers(layout.empty));
  if (!layout.hidden.empty())
    clauses.push_back(fmt::format("not shown to fit {} columns: {} (--wide shows every column)",
                                  options.style.width, headers(layout.hidden)));
  for (const TableColumn* c : layout.shown)
    if (c->legend)
      if (std::string clause = c->legend(t); !clause.empty()) clauses.push_back(std::move(clause));
  if (clauses.empty()) return "";
  std::string text;
  for (const std::string& clause : clauses) text += (text.empty() ? "" : "; ") + clause;
  return paint(wrap(text, options.style.width, 0, 2), Tone::dim, options.style.colour);
}

// Cases that did not run, with why, when the table has no room for the reason.
std::string not_run_section(const Layout& layout, const TableContext& t, const TextStyle& style) {
  if (std::any_of(layout.shown.begin(), layout.shown.end(),
                  [](const TableColumn* c) { return c->id == "reason"; }))
    return "";
  std::string out;
  for (const CaseResult& c : t.report().cases) {
    if (c.status == CaseStatus::ok) continue;
    const std::string head = paint(status_name(c.status), status_tone(c, t), style.colour);
    out += wrap(fmt::format("{} {}: {}{}", c.backend, problem_label(c.problem), head,
                            c.reason.empty() ? "" : ": " + c.reason),
                style.width, 2, kNotRunHang);
  }
  return out.empty() ? out : "\nnot run:\n" + out;
}

}  // namespace

const char* report_call_name(const RunReport& report) {
  if (report.cases.empty()) return pass_call_name(AttentionPass::forward);
  const AttentionPass pass = report.cases[0].problem.pass;
  return std::all_of(report.cases.begin(), report.cases.end(),
                     [&](const CaseResult& c) { return c.problem.pass == pass; })
             ? pass_call_name(pass)
             : "call";
}

TableContext::TableContext(const RunReport& report)
    : report_(report), call_name_(report_call_name(report)) {
  for (const CaseResult& c : report.cases) {
    if (c.status != CaseStatus::ok || !c.timing) continue;
    double& best =
        fastest_ms_.try_emplace(problem_key(c.problem), c.timing->median_ms).first->second;
    best = std::min(best, c.timing->median_ms);
  }
}

double TableContext::fastest_ms(const CaseResult& c) const {
  const auto it = fastest_ms_.find(problem_key(c.problem));
  return it == fastest_ms_.end() ? 0 : it->second;
}

bool TableContext::is_best(const CaseResult& c) const {
  return c.status == CaseStatus::ok && c.timing && c.timing->median_ms <= fastest_ms(c);
}

std::optional<PeakShare> TableContext::peak_share(const CaseResult& c) const {
  const std::optional<Ceilings>& ceilings = report_.environment.ceilings;
  return ceilings ? sdpa::peak_share(c, *ceilings) : std::nullopt;
}

std::string TableContext::peak_text(const CaseResult& c) const {
  const std::optional<PeakShare> share = peak_share(c);
  if (!share) return "";
  return fmt::format("{:.0f}% of {}", share->percent,
                     share->ceiling == Ceiling::read_bandwidth ? "HBM read bandwidth" : "peak");
}

const std::vector<TableColumn>& table_columns() {
  return kColumns;
}

const TableColumn* find_table_column(std::string_view id) {
  for (const TableColumn& c : kColumns)
    if (c.id == id) return &c;
  return nullptr;
}

std::vector<std::string> table_column_ids() {
  std::vector<std::string> ids;
  for (const TableColumn& c : kColumns) ids.emplace_back(c.id);
  return ids;
}

std::string kernel_display_name(const KernelProfile& k) {
  constexpr std::string_view kCut = "...";
  if (!k.name.ends_with(kCut)) return k.name;
  const std::string_view kept = std::string_view(k.name).substr(0, k.name.size() - kCut.size());
  return k.full_name.starts_with(kept) ? k.full_name : k.name;
}

std::string occupancy_cell(const KernelProfile& k) {
  if (!k.occupancy) return "-";
  static constexpr std::pair<unsigned, const char*> kShort[] = {
      {kLimitRegisters, "regs"}, {kLimitSharedMemory, "smem"}, {kLimitWarps, "warps"},
      {kLimitBlocks, "blocks"},  {kLimitBarriers, "barriers"},
  };
  std::string limiters;
  for (const auto& [flag, name] : kShort)
    if ((k.occupancy->limiters & flag) != 0) {
      limiters += limiters.empty() ? "" : "+";
      limiters += name;
    }
  return fmt::format("{:.3g}% {}", 100 * k.occupancy->theoretical, limiters);
}

std::string problem_label(const Problem& p) {
  return fmt::format("{} {}{}", p.shape_label(), dtype_name(p.dtype), p.causal ? " causal" : "");
}

std::string format_table(const RunReport& report, const TableOptions& options) {
  const TableContext t(report);
  const Layout layout = choose_columns(options, t);
  std::string out = table_rows(layout, t, options.style);
  out += table_notes(layout, t, options);
  out += not_run_section(layout, t, options.style);
  out += format_findings(report, options.style, options.every_finding || options.choice == ColumnChoice::wide);
  const bool any_marker = std::any_of(report.cases.begin(), report.cases.end(),
                                      [](const CaseResult& c) { return c.timing && clock_marker(*c.timing) != '\0'; });
  if (any_marker)
    out += wrap("p, t, h, c after a time: it ran under 95% of the peak SM clock (power cap, thermal, hardware "
                "slowdown, other or unknown reason); see findings",
                options.style.width, 0, 2);
  if (options.summary) out += format_summary(report, options.style);
  const Profiler& profiler = report.environment.profiler;
  if (!profiler.enabled && !profiler.description.empty())
    out += fmt::format("\n{}", wrap("profile off, timing only: " + profiler.description,
                                    options.style.width, 0, 2));
  return out;
}

}  // namespace sdpa
