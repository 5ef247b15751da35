#include "report/summary.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "model/case_key.h"
#include "model/counters.h"
#include "report/finding_parts.h"
#include "report/report.h"
#include "report/table_columns.h"
#include "report/text_layout.h"

namespace sdpa {
namespace {

constexpr double kOneKernel = 1.0 + 1e-9;  // a forward of one kernel (a mean over forwards)

std::string ratio_text(double r) {
  return r < 10 ? fmt::format("{:.2f}x", r) : fmt::format("{:.1f}x", r);
}

double median(const CaseResult& c) {
  return c.timing->median_ms;
}

bool one_kernel(const CaseResult& c) {
  return c.profile && c.profile->kernels_per_forward() <= kOneKernel;
}

bool has_rule(const CaseResult& c, std::string_view rule) {
  return c.profile && std::any_of(c.profile->findings.begin(), c.profile->findings.end(),
                                  [&](const Finding& f) { return f.rule == rule; });
}

// What one finding costs this backend, in a few words; "" for findings that are not a reason.
std::string finding_reason(const Finding& f, const CaseProfile& p, AttentionPass pass) {
  // Said elsewhere (kernel counts, occupancy, SIMT GEMMs), or not about speed.
  // tensor-idle: a fused kernel's tensor pipes are compared by their measured share instead.
  if (f.rule == "low-occupancy" || f.rule == "fused-extra-kernels" || f.rule == "dropped-records" ||
      f.rule == "achieved-occupancy" || f.rule == "tensor-idle")
    return "";
  return finding_parts(f, &p, pass).what;  // its figures are under the table, for each shape
}

// "35% of peak", "81% of HBM read bandwidth" ("278 TFLOP/s" without ceilings); the second of a
// pair drops the repeated words when both are held against the same ceiling.
std::string percent_of_peak_text(const CaseResult& c, const TableContext& t, const CaseResult* first = nullptr) {
  const std::optional<PeakShare> share = t.peak_share(c);
  if (!share) return fmt::format("{:.0f}{}", c.tflops(), first == nullptr ? " TFLOP/s" : "");
  const std::optional<PeakShare> before = first != nullptr ? t.peak_share(*first) : std::nullopt;
  if (before && before->ceiling == share->ceiling) return fmt::format("{:.0f}%", share->percent);
  return t.peak_text(c);
}

// One kernel each: the difference is inside the kernel, said by the same measured figures for
// every pair and shape: theoretical occupancy, the tensor pipes' busy share (with counters), % of
// peak.
std::string kernel_against_kernel(const CaseResult& slow, const CaseResult& ref, const TableContext& t) {
  const KernelProfile* mine = slow.profile->dominant_kernel();
  const KernelProfile* theirs = ref.profile->dominant_kernel();
  std::vector<std::string> figures;
  if (mine && theirs && mine->occupancy && theirs->occupancy) {
    const double my_occupancy = 100 * mine->occupancy->theoretical;
    const double their_occupancy = 100 * theirs->occupancy->theoretical;
    if (my_occupancy + 0.5 < their_occupancy)
      figures.push_back(fmt::format("{:.3g}% occupancy (limited by {}) against {:.3g}%", my_occupancy,
                                    limiter_text(mine->occupancy->limiters), their_occupancy));
    else if (my_occupancy > their_occupancy + 0.5)
      figures.push_back(fmt::format("its own higher {:.3g}% occupancy against {:.3g}%", my_occupancy, their_occupancy));
    else
      figures.push_back(fmt::format("both at {:.3g}% occupancy", my_occupancy));
  }
  const std::optional<double> my_tensor = mine ? counter_value(mine->counters, CounterRole::tensor_active) : std::nullopt;
  const std::optional<double> their_tensor =
      theirs ? counter_value(theirs->counters, CounterRole::tensor_active) : std::nullopt;
  if (my_tensor && their_tensor)
    figures.push_back(fmt::format("tensor pipes busy {:.0f}% of the time against {:.0f}%", *my_tensor, *their_tensor));
  figures.push_back(fmt::format("{} against {}", percent_of_peak_text(slow, t), percent_of_peak_text(ref, t, &slow)));
  std::string text;
  for (const std::string& figure : figures) text += (text.empty() ? "" : ", ") + figure;
  return text;
}

// Why `slow` takes longer than `ref`, from what their profiles show.
std::vector<std::string> reasons(const CaseResult& slow, const CaseResult& ref,
                                 const TableContext& t) {
  std::vector<std::string> out;
  if (!slow.profile) return out;
  const CaseProfile& p = *slow.profile;
  if (ref.profile && p.kernels_per_forward() > ref.profile->kernels_per_forward()) {
    std::string text =
        fmt::format("{:g} kernels per {} against {:g}", p.kernels_per_forward(),
                    pass_call_name(slow.problem.pass), ref.profile->kernels_per_forward());
    if (one_kernel(ref))
      text += fmt::format(", the {} score matrix written to and read from memory between them",
                          bytes_text(static_cast<double>(slow.problem.score_elements()) * 2));
    out.push_back(text);
  }
  for (const Finding& f : p.findings)
    if (!has_rule(ref, f.rule))
      if (std::string reason = finding_reason(f, p, slow.problem.pass);
          !reason.empty() && std::find(out.begin(), out.end(), reason) == out.end())
        out.push_back(reason);
  if (ref.profile && one_kernel(slow) && one_kernel(ref)) out.push_back(kernel_against_kernel(slow, ref, t));
  return out;
}

// Within the two medians' relative spreads added: the order of the two could be either way.
bool within_noise(const CaseResult& a, const CaseResult& b) {
  const double noise = a.timing->relative_spread + b.timing->relative_spread;
  return a.timing->relative_spread >= 0 && b.timing->relative_spread >= 0 &&
         median(b) / median(a) - 1 <= noise;
}

ProblemSummary summarize_problem(const std::vector<const CaseResult*>& cases,
                                 const TableContext& t) {
  ProblemSummary s;
  s.problem = problem_label(cases.front()->problem);
  std::vector<const CaseResult*> ran;
  for (const CaseResult* c : cases)
    if (c->status == CaseStatus::ok && c->timing) ran.push_back(c);
  std::stable_sort(ran.begin(), ran.end(), [](const CaseResult* a, const CaseResult* b) {
    return median(*a) < median(*b);
  });

  if (!ran.empty()) {
    const CaseResult& best = *ran.front();
    // A memory-bound case's rate is its bandwidth: the bytes a forward must move per second.
    const std::optional<PeakShare> share = t.peak_share(best);
    const std::string rate = share && share->ceiling == Ceiling::read_bandwidth
                                 ? fmt::format("{:.2f} TB/s", best.achieved_tb_per_s())
                                 : fmt::format("{:.0f} TFLOP/s", best.tflops());
    std::string text = fmt::format("{} is {}: {:.3f} ms, {}", best.backend,
                                   ran.size() == 1 ? "the only one that ran" : "fastest", median(best), rate);
    if (const std::string peak = t.peak_text(best); !peak.empty()) text += " (" + peak + ")";
    if (ran.size() > 1) {
      const CaseResult& next = *ran[1];
      text += within_noise(best, next) ? fmt::format("; {} is as fast within the noise ({:.3f} ms)",
                                                     next.backend, median(next))
                                       : fmt::format(", {} faster than {} ({:.3f} ms)",
                                                     ratio_text(median(next) / median(best)),
                                                     next.backend, median(next));
    }
    s.lines.push_back({best.backend, SummaryKind::fastest, text});
  }
  for (std::size_t i = 1; i < ran.size(); ++i) {
    const CaseResult& slow = *ran[i];
    // The fastest faster case of the same kind (one kernel or several); else the fastest.
    const CaseResult* ref = ran.front();
    if (slow.profile)
      for (std::size_t j = 0; j < i; ++j)
        if (ran[j]->profile && one_kernel(*ran[j]) == one_kernel(slow)) {
          ref = ran[j];
          break;
        }
    std::string text;
    if (within_noise(*ref, slow)) {
      text = fmt::format("{} is as fast as {} within the noise ({})", slow.backend, ref->backend,
                         ratio_text(median(slow) / median(*ref)));
    } else {
      text = fmt::format("{} is {} slower than {}", slow.backend,
                         ratio_text(median(slow) / median(*ref)), ref->backend);
      const std::vector<std::string> why = reasons(slow, *ref, t);
      for (std::size_t k = 0; k < why.size(); ++k) text += (k == 0 ? ": " : ", ") + why[k];
      if (!slow.profile) text += " (no kernel profile to say why)";
    }
    s.lines.push_back({slow.backend, SummaryKind::slower, text});
  }
  for (const CaseResult* c : cases) {
    if (c->status == CaseStatus::ok) continue;
    const bool failed = c->status == CaseStatus::failed;
    s.lines.push_back({c->backend, failed ? SummaryKind::failed : SummaryKind::skipped,
                       fmt::format("{} {}{}", c->backend, failed ? "failed" : "was skipped",
                                   c->reason.empty() ? "" : ": " + c->reason)});
  }
  return s;
}

}  // namespace

std::vector<ProblemSummary> summarize(const RunReport& report) {
  const TableContext t(report);
  std::vector<std::pair<CaseKey, std::vector<const CaseResult*>>>
      problems;  // in the order they first appear
  for (const CaseResult& c : report.cases) {
    const CaseKey key = problem_key(c.problem);
    auto it = std::find_if(problems.begin(), problems.end(),
                           [&](const auto& p) { return p.first == key; });
    if (it == problems.end()) it = problems.insert(problems.end(), {key, {}});
    it->second.push_back(&c);
  }
  std::vector<ProblemSummary> out;
  for (const auto& [key, cases] : problems) out.push_back(summarize_problem(cases, t));
  return out;
}

std::string format_summary(const RunReport& report, const TextStyle& style) {
  std::string out;
  for (const ProblemSummary& p : summarize(report)) {
    out += "  " + p.problem + "\n";
    for (const SummaryLine& line : p.lines) {
      const Tone tone = line.kind == SummaryKind::fastest   ? Tone::best
                        : line.kind == SummaryKind::failed  ? Tone::bad
                        : line.kind == SummaryKind::skipped ? Tone::warn
                                                            : Tone::plain;
      // The backend's name in its colour; the sentence after it plain.
      out += wrap(paint(line.backend, tone, style.colour) + line.text.substr(line.backend.size()),
                  style.width, 4, 4);
    }
  }
  return out.empty() ? out : "\nsummary:\n" + out;
}

}  // namespace sdpa
