#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "report/html_page.h"
#include "report/report.h"
#include "report/summary.h"
#include "model/roofline.h"
#include "report/svg_chart.h"
#include "report/table_columns.h"
#include "report/text_layout.h"

namespace sdpa {
namespace {

constexpr KernelCategory kCategoryOrder[] = {
    KernelCategory::tensor_core_gemm,
    KernelCategory::simt_gemm,
    KernelCategory::elementwise,
    KernelCategory::reduction,
    KernelCategory::softmax,
    KernelCategory::fused_attention,
    KernelCategory::copy,
    KernelCategory::other,
};

constexpr std::size_t kHtmlNameWidth = 36;  // kernel names in the results table, whole on hover

std::string case_anchor(std::size_t index) {
  return fmt::format("case-{}", index + 1);
}

// "flash · S4096 D64", "flash · S4096 D64 bwd": a bar's label, as scripts/plot.py writes it.
std::string bar_label(const CaseResult& c) {
  const Problem& p = c.problem;
  return fmt::format("{} \xC2\xB7 S{} D{}{}", c.backend, p.seq_q, p.head_dim,
                     p.has_backward() ? fmt::format(" {}", pass_name(p.pass)) : "");
}

const char* row_class(const CaseResult& c, const TableContext& t) {
  if (c.status == CaseStatus::failed) return "case failed";
  if (c.status == CaseStatus::skipped) return "case skipped";
  return t.is_best(c) ? "case ok best" : "case ok";
}

// Every column, but those that say one value for every case (dtype, causal) say it once above the
// table, and those no case has a value for are left out.
std::string results_section(const RunReport& report, const TableContext& t) {
  std::vector<const TableColumn*> columns;
  std::string every;
  for (const TableColumn& c : table_columns()) {
    std::set<std::string> values;
    for (const CaseResult& row : report.cases) values.insert(c.cell(row, t));
    if (values.empty() ||
        (values.size() == 1 && (*values.begin() == "-" || values.begin()->empty())))
      continue;
    if (c.foldable && values.size() == 1) {
      const std::string value = *values.begin();
      every += (every.empty() ? "" : ", ") +
               (c.id == "causal" ? (value == "yes" ? std::string("causal") : "not causal") : value);
      continue;
    }
    columns.push_back(&c);
  }
  std::string out = "<section id=\"results\">\n<h2>Results</h2>\n";
  if (!every.empty()) out += "<p>Every case: " + html_escape(every) + ".</p>\n";
  out += "<div class=\"table-wrap\">\n<table class=\"results sortable\">\n<thead><tr>";
  for (const TableColumn* c : columns)
    out += fmt::format("<th{}>{}</th>", c->right_aligned ? " class=\"num\"" : "",
                       html_escape(std::string(c->title)));
  out += "</tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    const CaseResult& row = report.cases[i];
    out += fmt::format("<tr class=\"{}\">", row_class(row, t));
    for (const TableColumn* column : columns) {
      const TableColumn& c = *column;
      const std::string text = c.cell(row, t);
      std::string cell = html_escape(text);
      std::string attributes;
      if (c.id == "backend") cell = fmt::format("<a href=\"#{}\">{}</a>", case_anchor(i), cell);
      if (c.id == "time" && row.timing)
        attributes = fmt::format(" data-sort=\"{}\"", row.timing->median_ms);
      if (c.max_width > 0 && display_width(text) > kHtmlNameWidth)  // the whole name on hover
        cell = fmt::format("<span title=\"{}\">{}</span>", cell,
                           html_escape(shorten_middle(text, kHtmlNameWidth)));
      const char* css = c.right_aligned ? " num" : c.id == "kernel" ? " mono" : "";
      out += fmt::format("<td class=\"{}{}\"{}>{}</td>", c.id, css, attributes, cell);
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n</div>\n<p class=\"legend\">";
  std::string legend;
  for (const TableColumn* c : columns)
    if (const std::string clause = c->legend ? c->legend(t) : ""; !clause.empty())
      legend += (legend.empty() ? "" : "; ") + clause;
  return out + html_escape(legend) + ". Click a header to sort by it.</p>\n</section>\n";
}

std::string summary_section(const RunReport& report) {
  std::string out = "<section id=\"summary\">\n<h2>Summary</h2>\n";
  const std::vector<ProblemSummary> summary = summarize(report);
  if (summary.empty()) out += "<p>No cases.</p>\n";
  for (const ProblemSummary& p : summary) {
    out += fmt::format("<h3>{}</h3>\n<ul class=\"summary\">\n", html_escape(p.problem));
    for (const SummaryLine& line : p.lines) {
      const char* kind = line.kind == SummaryKind::fastest   ? "fastest"
                         : line.kind == SummaryKind::failed  ? "failed"
                         : line.kind == SummaryKind::skipped ? "skipped"
                                                             : "slower";
      out += fmt::format("<li class=\"{}\">{}</li>\n", kind, html_escape(line.text));
    }
    out += "</ul>\n";
  }
  return out + "</section>\n";
}

std::string tflops_chart(const RunReport& report) {
  LineChart chart{.id = "chart-tflops",
                  .title = "Throughput against sequence length",
                  .x_label = "sequence length",
                  .y_label = "TFLOP/s (visible pairs only)"};
  std::map<std::tuple<std::string, int64_t, std::string, bool, AttentionPass, LaunchMode>, std::size_t>
      series_of;  // in first-seen order
  bool any_bf16 = false;
  for (const CaseResult& c : report.cases) {
    if (c.status != CaseStatus::ok || !c.timing) continue;
    const Problem& p = c.problem;
    any_bf16 = any_bf16 || p.dtype == DType::bf16;
    const auto key =
        std::make_tuple(c.backend, p.head_dim, std::string(dtype_name(p.dtype)), p.causal, p.pass, p.launch);
    auto it = series_of.find(key);
    if (it == series_of.end()) {
      it = series_of.emplace(key, chart.series.size()).first;
      chart.series.push_back({fmt::format("{} D{} {}{}{}{}", c.backend, p.head_dim, dtype_name(p.dtype),
                                          p.causal ? "" : " non-causal",
                                          p.has_backward() ? fmt::format(" {}", pass_name(p.pass)) : "",
                                          p.launch == LaunchMode::graph ? " graph" : ""),
                              {}});
    }
    chart.series[it->second].points.emplace_back(static_cast<double>(p.seq_q), c.tflops());
  }
  if (const std::optional<Ceilings>& ceilings = report.environment.ceilings) {
    const double peak = any_bf16 ? ceilings->bf16_gemm_tflops : ceilings->fp16_gemm_tflops;
    chart.reference = std::make_pair(
        fmt::format("{} GEMM ceiling {:.0f} TFLOP/s", any_bf16 ? "bf16" : "fp16", peak), peak);
  }
  return svg_line_chart(chart);
}

// One dot per timed case at its arithmetic intensity, under the roof of the measured ceilings; empty
// without a read ceiling (results from before it) or a timed case.
std::string roofline_chart(const RunReport& report) {
  const std::optional<Ceilings>& ceilings = report.environment.ceilings;
  if (!ceilings || ceilings->read_tb_per_s <= 0) return "";
  RooflineChart chart{.id = "chart-roofline", .title = "Roofline: each case against the measured ceilings"};
  std::map<std::string, std::size_t> series_of;
  bool any_bf16 = false;
  for (const CaseResult& c : report.cases) {
    if (c.status != CaseStatus::ok || !c.timing) continue;
    any_bf16 = any_bf16 || c.problem.dtype == DType::bf16;
    auto it = series_of.find(c.backend);
    if (it == series_of.end()) {
      it = series_of.emplace(c.backend, chart.series.size()).first;
      chart.series.push_back({c.backend, {}});
    }
    chart.series[it->second].points.emplace_back(c.problem.flops() / c.problem.min_bytes(), c.tflops());
  }
  if (chart.series.empty()) return "";
  chart.compute_tflops = compute_ceiling_tflops(*ceilings, any_bf16 ? DType::bf16 : DType::fp16);
  chart.read_tb_per_s = ceilings->read_tb_per_s;
  return svg_roofline_chart(chart);
}

std::string kernel_time_chart(const RunReport& report) {
  BarChart chart{.id = "chart-kernel-time",
                 .title = "Where the time goes: kernel time per call by category",
                 .axis_label = "share of the call's kernel time",
                 .as_share = true};
  std::vector<KernelCategory> present;
  for (std::size_t i = 0; i < std::size(kCategoryOrder); ++i)
    for (const CaseResult& c : report.cases)
      if (c.status == CaseStatus::ok && c.profile &&
          std::any_of(c.profile->kernels.begin(), c.profile->kernels.end(),
                      [&](const KernelProfile& p) { return p.category == kCategoryOrder[i]; })) {
        present.push_back(kCategoryOrder[i]);
        chart.keys.emplace_back(category_name(kCategoryOrder[i]));
        chart.colours.emplace_back(
            chart_colour(i));  // a category keeps its colour whatever else is there
        break;
      }
  for (const CaseResult& c : report.cases) {
    if (c.status != CaseStatus::ok || !c.profile) continue;
    BarRow row{bar_label(c), {}, {}, {}};
    double total_us = 0;
    for (const KernelProfile& k : c.profile->kernels) total_us += k.us_per_forward();
    for (const KernelCategory category : present) {
      double us = 0;
      for (const KernelProfile& k : c.profile->kernels)
        if (k.category == category) us += k.us_per_forward();
      row.values.push_back(us);
      row.tips.push_back(fmt::format("{} {:.3f} ms ({:.0f}%)", category_name(category), us / 1000,
                                     total_us > 0 ? 100 * us / total_us : 0.0));
    }
    row.note = fmt::format("{:.3f} ms", total_us / 1000);
    chart.rows.push_back(row);
  }
  return svg_bar_chart(chart);
}

std::string launches_chart(const RunReport& report) {
  BarChart chart{
      .id = "chart-kernels",
      .title = "Launches per call",
      .axis_label = "kernels and memcpys per call (forward, backward or both: the bar's pass)",
      .keys = {"kernels", "memcpys"}};
  for (const CaseResult& c : report.cases) {
    if (c.status != CaseStatus::ok || !c.profile) continue;
    const double kernels = c.profile->kernels_per_forward();
    const double memcpys = c.profile->memcpys_per_forward();
    chart.rows.push_back(
        {bar_label(c),
         {kernels, memcpys},
         memcpys > 0 ? fmt::format("{:g} + {:g} memcpy", kernels, memcpys)
                     : fmt::format("{:g}", kernels),
         {fmt::format("{:g} kernels", kernels), fmt::format("{:g} memcpys", memcpys)}});
  }
  return svg_bar_chart(chart);
}

std::string charts_section(const RunReport& report) {
  const bool profiled = std::any_of(report.cases.begin(), report.cases.end(),
                                    [](const CaseResult& c) { return c.profile.has_value(); });
  std::string out = "<section id=\"charts\">\n<h2>Charts</h2>\n";
  out += "<figure>\n" + tflops_chart(report) +
         "<figcaption>Median throughput of each backend against the sequence length (log axes); "
         "FLOPs count only the (query, key) pairs the mask leaves visible. "
         "Dashed: this GPU's measured dense GEMM ceiling.</figcaption>\n"
         "</figure>\n";
  if (const std::string roofline = roofline_chart(report); !roofline.empty())
    out += "<figure>\n" + roofline +
           "<figcaption>Each timed case at its FLOPs per byte a call must move "
           "(a forward: Q, K, V read, O written once; "
           "a backward: Q, K, V, O, dO read, dQ, dK, dV written), "
           "under the roof of this GPU's measured GEMM and HBM read ceilings: "
           "left of the ridge a case is memory-bound and %peak holds it against the read ceiling."
           "</figcaption>\n</figure>\n";
  if (!profiled)
    return out +
           "<p>No kernel profile in this run: the charts of where the time goes are left "
           "out.</p>\n</section>\n";
  out += "<figure>\n" + kernel_time_chart(report) +
         "<figcaption>Each forward's kernel time split by kernel category, "
         "as a share of the whole; the total is at the right of each bar. "
         "Hover a segment for its time.</figcaption>\n</figure>\n";
  out += "<figure>\n" + launches_chart(report) +
         "<figcaption>Kernels and memcpys one forward launches: "
         "a fused backend launches one.</figcaption>\n</figure>\n";
  return out + "</section>\n";
}

std::string dims(const Dim3& d) {
  return fmt::format("({},{},{})", d.x, d.y, d.z);
}

std::string kernel_table(const CaseProfile& p, AttentionPass pass) {
  std::string out = fmt::format(
      "<div class=\"table-wrap\"><table class=\"kernels\">\n<thead><tr>"
      "<th>kernel</th><th>category</th><th class=\"num\">/{}</th><th class=\"num\">mean us</th>"
      "<th>grid</th><th>block</th><th class=\"num\">regs</th><th class=\"num\">smem KB s+d</th>"
      "<th>cluster</th><th>launch</th><th class=\"num\">occ.</th><th>limited by</th>"
      "<th class=\"num\">torch</th></tr></thead>\n<tbody>\n",
      pass_name(pass));
  for (const KernelProfile& k : p.kernels) {
    const OccupancyEstimate* o = k.occupancy ? &*k.occupancy : nullptr;
    out += fmt::format(
        "<tr><td class=\"kernel-name mono\" title=\"{}\">{}</td><td>{}</td><td "
        "class=\"num\">{:g}</td><td class=\"num\">"
        "{:.1f}</td><td class=\"mono\">{}</td><td class=\"mono\">{}</td><td "
        "class=\"num\">{}</td><td class=\"num\">"
        "{:.1f}+{:.1f}</td><td>{}x{}x{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td "
        "class=\"num\">{}</td></tr>\n",
        html_escape(k.full_name), html_escape(kernel_display_name(k)), category_name(k.category),
        k.per_forward, k.mean_us, dims(k.grid), dims(k.block), k.registers_per_thread,
        k.static_shared / 1024.0, k.dynamic_shared / 1024.0, k.cluster.x, k.cluster.y, k.cluster.z,
        html_escape(k.launch_type), o ? fmt::format("{:.1f}%", 100 * o->theoretical) : "-",
        o ? html_escape(limiter_text(o->limiters)) : "-",
        o ? fmt::format("{:.1f}%", 100 * o->profiler_style) : "-");
  }
  for (const MemcpyProfile& m : p.memcpys)
    out += fmt::format(
        "<tr><td class=\"mono\">memcpy {}</td><td>copy</td><td class=\"num\">{:g}</td><td "
        "class=\"num\">{:.1f}</td>"
        "<td colspan=\"9\">{:.1f} MiB per copy</td></tr>\n",
        html_escape(m.kind), m.per_forward, m.mean_us,
        m.mib_per_copy());
  return out + "</tbody>\n</table></div>\n";
}

// A call's CPU ops as a call tree (an op indented under its caller), per call of `pass`.
std::string op_table(const OpsProfile& o, AttentionPass pass) {
  const std::string launches_outside =
      o.launches_outside_ops > 0
          ? fmt::format(", {:g} launches outside every op", o.launches_outside_ops)
          : "";
  std::string out =
      "<p>" +
      html_escape(fmt::format("CPU ops per {0}: the {0}'s host time {1:.1f} us, "
                              "{2:.1f} us of it inside launch calls{3}; traced (NVTX and CUPTI on)",
                              pass_call_name(pass), o.host_us, o.launch_api_us, launches_outside)) +
      "</p>\n";
  out += fmt::format(
      "<div class=\"table-wrap\"><table class=\"ops\">\n<thead><tr><th>op</th>"
      "<th class=\"num\">calls/{}</th><th class=\"num\">CPU total us</th>"
      "<th class=\"num\">CPU self us</th><th class=\"num\">kernels</th>"
      "<th class=\"num\">memcpys</th><th class=\"num\">memsets</th></tr></thead>\n<tbody>\n",
      pass_name(pass));
  for (const OpProfile& op : o.ops)
    out += fmt::format(
        "<tr><td class=\"mono\" style=\"padding-left:{}em\" title=\"{}\">{}</td><td class=\"num\">{:g}</td><td "
        "class=\"num\">{:.1f}</td><td class=\"num\">{:.1f}</td><td class=\"num\">{:g}</td><td "
        "class=\"num\">{:g}</td><td class=\"num\">{:g}</td></tr>\n",
        0.5 + 1.2 * op.depth, html_escape(fmt::format("{}", fmt::join(op.shapes, " "))), html_escape(op.name), op.calls,
        op.total_us, op.self_us, op.kernels, op.memcpys, op.memsets);
  return out + "</tbody>\n</table></div>\n";
}

std::string case_details(const CaseResult& c, std::size_t index, const TableContext& t) {
  std::string facts;
  if (c.timing) facts = fmt::format("{:.3f} ms, {:.1f} TFLOP/s", c.timing->median_ms, c.tflops());
  if (c.profile) {
    const KernelProfile* top = c.profile->dominant_kernel();
    const double kernels = c.profile->kernels_per_forward();
    facts += fmt::format(", {:g} kernel{} per {}", kernels, kernels == 1 ? "" : "s",
                         pass_call_name(c.problem.pass));
    if (top && top->occupancy) facts += fmt::format(", {} occupancy", occupancy_cell(*top));
  }
  if (c.status != CaseStatus::ok) facts = status_name(c.status);
  std::string out = fmt::format(
      "<details class=\"case\" id=\"{}\">\n<summary>{} \xE2\x80\x94 {} <span "
      "class=\"facts\">{}</span></summary>\n",
      case_anchor(index), html_escape(c.backend), html_escape(problem_label(c.problem)),
      html_escape(facts));
  if (!c.reason.empty())
    out += fmt::format("<p><strong>{}</strong>: {}</p>\n", status_name(c.status),
                       html_escape(c.reason));
  if (c.verification) {
    const Verification& v = *c.verification;
    out += fmt::format(
        "<p>verified: {}, relative L2 error {:.1e} (tolerance {:.0e}), max abs error {:.2e} "
        "({:g}), {} non-finite</p>\n",
        v.passed ? "yes" : "<strong>no</strong>", v.rel_l2_error, v.rel_l2_tolerance,
        v.max_abs_error, v.max_abs_tolerance, v.non_finite);
  }
  if (c.timing) {
    const TimingStats& s = *c.timing;
    std::string text = fmt::format(
        "timing: median {:.4f} ms (min {:.4f}, max {:.4f}), {} samples after {} warm-up",
        s.median_ms, s.min_ms, s.max_ms, s.samples, s.warmup);
    if (s.relative_spread >= 0)
      text += fmt::format(", spread \xC2\xB1{:.2f}%{}", 100 * s.relative_spread,
                          s.converged ? "" : " (not converged)");
    if (s.sm_clock_mhz > 0) text += fmt::format(", SM clock {:.0f} MHz", s.sm_clock_mhz);
    if (const std::string peak = t.peak_text(c); !peak.empty()) text += ", " + peak;
    out += "<p>" + html_escape(text) + "</p>\n";
  }
  if (c.host)
    out += "<p>" +
           html_escape(fmt::format(
               "host: {:.1f} us per call{}, first call {:.1f} us, setup {:.2f} ms{}", c.host->per_call_us,
               c.problem.launch == LaunchMode::graph ? " (one CUDA graph launch)" : "", c.host->first_call_us,
               c.host->setup_ms, setup_text(c.setup))) +
           "</p>\n";
  if (c.profile) {
    const CaseProfile& p = *c.profile;
    const double kernel_us = p.kernel_us_per_forward();
    const double wall_us = p.wall_us_per_forward();
    out += "<p>" +
           html_escape(fmt::format("per {} (mean of {}): {:g} kernels, {:g} memcpys, {:g} "
                                   "memsets; kernel time {:.1f} "
                                   "us of {:.1f} us wall ({:.0f}%)",
                                   pass_call_name(c.problem.pass), p.forwards.size(),
                                   p.kernels_per_forward(), p.memcpys_per_forward(),
                                   p.memsets_per_forward(), kernel_us, wall_us,
                                   wall_us > 0 ? 100 * kernel_us / wall_us : 0.0)) +
           "</p>\n";
    out += kernel_table(p, c.problem.pass);
    if (p.ops) out += op_table(*p.ops, c.problem.pass);
    if (!p.findings.empty()) {
      out += "<ul class=\"findings\">\n";
      for (const Finding& f : p.findings)
        out +=
            fmt::format("<li><code>{}</code> {}</li>\n", html_escape(f.rule), html_escape(f.text));
      out += "</ul>\n";
    }
  }
  return out + "</details>\n";
}

std::string cases_section(const RunReport& report, const TableContext& t) {
  std::string out =
      "<section id=\"cases\">\n<h2>Cases</h2>\n<p class=\"legend\">Each case's kernels, copies and "
      "findings. occ.: "
      "theoretical occupancy (opt-in shared-memory limit, the carveout the kernel ran with); "
      "torch: what PyTorch's "
      "profiler estimates (48 KB default limit, blocks capped by grid / SMs).</p>\n";
  for (std::size_t i = 0; i < report.cases.size(); ++i) out += case_details(report.cases[i], i, t);
  return out + "</section>\n";
}

}  // namespace

std::string format_html(const RunReport& report) {
  const TableContext t(report);
  const std::string device =
      report.environment.device ? report.environment.device->name : "no device";
  const std::string title = fmt::format("sdpa-prof: {}, {} cases", device, report.cases.size());
  std::string subtitle = fmt::format("preset {} \xC2\xB7 started {} (UTC)", report.config.name,
                                     report.environment.started_at);
  if (const std::optional<DeviceInfo>& d = report.environment.device)
    subtitle = fmt::format("sm_{}{}, {} SMs \xC2\xB7 driver {} \xC2\xB7 CUDA {} \xC2\xB7 {}",
                           d->cc_major, d->cc_minor, d->sm_count, version_text(d->driver_version),
                           version_text(d->runtime_version), subtitle);
  std::string body = fmt::format(
      "<header>\n<h1>{}</h1>\n<p class=\"subtitle\">{}</p>\n<nav><a "
      "href=\"#results\">Results</a><a href=\"#summary\">"
      "Summary</a><a href=\"#charts\">Charts</a><a href=\"#cases\">Cases</a><a "
      "href=\"#environment\">Environment</a>"
      "</nav>\n</header>\n",
      html_escape(title), html_escape(subtitle));
  // What a reader looks for first comes first; the environment, for the record, last.
  body += results_section(report, t);
  body += summary_section(report);
  body += charts_section(report);
  body += cases_section(report, t);
  body += "<section id=\"environment\">\n<h2>Environment</h2>\n" + html_environment(report) +
          "</section>\n";
  body +=
      "<footer>Written by sdpa-prof: one file, nothing fetched (no network, no external scripts or "
      "fonts).</footer>\n";
  return html_document(title, body);
}

}  // namespace sdpa
