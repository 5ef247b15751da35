// The CPU ops of each case (--ops): a table like torch.profiler's key_averages, but as the call
// tree the forward ran (an op under its caller), for the terminal, Markdown and CSV.
#include <algorithm>

#include <fmt/format.h>

#include "model/axes.h"
#include "report/cell_escape.h"
#include "report/report.h"
#include "report/text_layout.h"

namespace sdpa {
namespace {

constexpr std::size_t kIndent = 2;        // per level of the call tree
constexpr std::size_t kMinNameColumn = 24;
constexpr const char* kNumbersHeader = "  calls   CPU us  self us  kern  copy   set";
const std::size_t kNumbersWidth = std::char_traits<char>::length(kNumbersHeader);

std::string case_title(const CaseResult& c) {
  return fmt::format("{} {} {}{}", c.backend, c.problem.shape_label(), dtype_name(c.problem.dtype),
                     c.problem.causal ? " causal" : "");
}

double op_calls(const OpsProfile& o) {
  double calls = 0;
  for (const OpProfile& op : o.ops) calls += op.calls;
  return calls;
}

std::string ops_summary(const CaseResult& c, const OpsProfile& o) {
  std::string text = fmt::format(
      "{0}: {1:g} op calls per {2} ({3} ops in the call tree); "
      "the {2}'s host time {4:.1f} us, {5:.1f} us of it inside launch calls",
      case_title(c), op_calls(o), pass_call_name(c.problem.pass), o.ops.size(), o.host_us,
      o.launch_api_us);
  if (o.launches_outside_ops > 0) text += fmt::format("; {:g} launches outside every op", o.launches_outside_ops);
  if (o.unclosed > 0) text += fmt::format("; {} op ranges never ended (left out)", o.unclosed);
  if (c.host) text += fmt::format("; host {:.1f} us per call timed apart, without op ranges", c.host->per_call_us);
  return text;
}

std::string number(double v, const char* format) { return v > 0 ? fmt::format(fmt::runtime(format), v) : "-"; }

bool any_ops(const RunReport& report) {
  return std::any_of(report.cases.begin(), report.cases.end(),
                     [](const CaseResult& c) { return c.profile && c.profile->ops; });
}

}  // namespace

std::string format_ops(const RunReport& report, const TextStyle& style) {
  if (!any_ops(report)) return "\nops: no case has CPU op ranges (trace a program under emit_nvtx, or --with-torch)\n";
  const std::size_t name_width =
      std::max(kMinNameColumn, style.width > kNumbersWidth + 2 ? style.width - kNumbersWidth - 2 : 0);
  std::string out;
  for (const CaseResult& c : report.cases) {
    if (!c.profile || !c.profile->ops) continue;
    const OpsProfile& o = *c.profile->ops;
    out += '\n' + wrap(ops_summary(c, o), style.width, 0, 4);
    out += "  " + pad("op", name_width) + kNumbersHeader + "\n";
    for (const OpProfile& op : o.ops) {
      const std::size_t indent = kIndent * static_cast<std::size_t>(op.depth);
      const std::string name = std::string(std::min(indent, name_width / 2), ' ') +
                               shorten_middle(op.name, name_width - std::min(indent, name_width / 2));
      out += fmt::format("  {}{:>7g} {:>8.1f} {:>8.1f} {:>5} {:>5} {:>5}\n", pad(name, name_width), op.calls,
                         op.total_us, op.self_us, number(op.kernels, "{:g}"), number(op.memcpys, "{:g}"),
                         number(op.memsets, "{:g}"));
    }
  }
  return out + "\n" +
         wrap(fmt::format(
                  "ops: per {0} (mean of the profiled {0}s), an op under the op that called it; "
                  "CPU us: wall time inside the op, its children included; "
                  "self us: less its children; "
                  "kern, copy, set: kernels, memcpys and memsets the op launched itself. "
                  "Times are traced (NVTX and CUPTI on): "
                  "compare them with each other, not with untraced host times",
                  report_call_name(report)),
              style.width, 0, 2);
}

std::string format_ops_markdown(const RunReport& report) {
  std::string out;
  for (const CaseResult& c : report.cases) {
    if (!c.profile || !c.profile->ops) continue;
    const OpsProfile& o = *c.profile->ops;
    out += fmt::format("\n**{}**\n\n", markdown_cell(ops_summary(c, o)));
    out += fmt::format(
        "| op | calls/{} | CPU total us | CPU self us | kernels | memcpys | memsets | shapes |\n"
        "|---|---:|---:|---:|---:|---:|---:|---|\n",
        pass_name(c.problem.pass));
    for (const OpProfile& op : o.ops)
      out += fmt::format("| {}{} | {:g} | {:.1f} | {:.1f} | {:g} | {:g} | {:g} | {} |\n",
                         std::string(2 * static_cast<std::size_t>(op.depth), '.'), markdown_cell(op.name), op.calls,
                         op.total_us, op.self_us, op.kernels, op.memcpys, op.memsets,
                         markdown_cell(fmt::format("{}", fmt::join(op.shapes, " "))));
  }
  return out.empty() ? out : fmt::format("\n**CPU ops per {}**\n", report_call_name(report)) + out;
}

std::string format_ops_csv(const RunReport& report) {
  std::string out = "backend";
  for (const AxisSpec& a : axis_table()) out.append(",").append(a.result_key());
  out += ",op_index,op,parent,depth,calls_per_forward,cpu_total_us,cpu_self_us,kernels,memcpys,memsets,shapes\n";
  for (const CaseResult& c : report.cases) {
    if (!c.profile || !c.profile->ops) continue;
    std::string key = csv_field(c.backend);
    for (const AxisSpec& a : axis_table()) key.append(",").append(csv_field(axis_value_text(a.read(c.problem))));
    const std::vector<OpProfile>& ops = c.profile->ops->ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const OpProfile& op = ops[i];
      out += fmt::format("{},{},{},{},{},{:g},{:.3f},{:.3f},{:g},{:g},{:g},{}\n", key, i, csv_field(op.name),
                         op.parent, op.depth, op.calls, op.total_us, op.self_us, op.kernels, op.memcpys, op.memsets,
                         csv_field(fmt::format("{}", fmt::join(op.shapes, " "))));
    }
  }
  return out;
}

}  // namespace sdpa
