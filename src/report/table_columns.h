// The results table's columns, each defined once: the terminal table, Markdown and the HTML page
// read them, so a column added here (a clock, a power figure) appears in all three.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/case_key.h"
#include "model/result.h"
#include "model/roofline.h"
#include "report/text_layout.h"

namespace sdpa {

// What a row needs beyond its own case: the fastest time of its problem, the run's ceilings.
class TableContext {
 public:
  explicit TableContext(const RunReport& report);

  const RunReport& report() const { return report_; }
  // The fastest ok case's median on this case's problem; 0 when none ran.
  double fastest_ms(const CaseResult& c) const;
  // The case ran and no backend was faster on its problem.
  bool is_best(const CaseResult& c) const;
  // Against the ceiling that bounds the case (model/roofline.h); none without ceilings or timing.
  std::optional<PeakShare> peak_share(const CaseResult& c) const;
  // "35% of peak", "81% of HBM read bandwidth"; "" when unknown.
  std::string peak_text(const CaseResult& c) const;
  // What the table's per-call figures are per: "forward" (or "backward", ...) when every case
  // is of one pass, "call" when the table mixes them.
  const char* call_name() const { return call_name_; }

 private:
  const RunReport& report_;
  std::unordered_map<CaseKey, double, CaseKeyHash> fastest_ms_;
  const char* call_name_;
};

// When the compact (default) table shows a column.
enum class Compact { yes, no, when_varies };

struct TableColumn {
  std::string_view id;      // the name --columns takes
  std::string_view header;  // in the terminal table
  std::string_view title;   // in Markdown and HTML, where headers may be longer
  bool right_aligned = false;
  Compact compact = Compact::no;
  // In the compact table, when the terminal is too narrow, columns leave in this order (1 first);
  // 0: never. A column whose every row is the same leaves first and is said in one line instead.
  int drop_order = 0;
  bool foldable = false;  // may be said as "every case: <value>" when every row is the same
  std::size_t max_width =
      0;  // terminal only: longer cells are shortened in the middle; 0: no limit
  std::string (*cell)(const CaseResult&, const TableContext&) = nullptr;
  Tone (*tone)(const CaseResult&, const TableContext&) = nullptr;  // nullptr: plain
  // One clause under the table saying what the column means ("" when the header says it).
  std::string (*legend)(const TableContext&) = nullptr;
};

// Every column, in the order of the wide table.
const std::vector<TableColumn>& table_columns();
const TableColumn* find_table_column(std::string_view id);

// The kernel's readable name, whole: results record names shortened to 80 characters with
// "..."; where the recorded full name shows what was cut (cuBLAS, cuDNN names), it comes back.
std::string kernel_display_name(const KernelProfile& k);

// "18.8% regs+smem": theoretical occupancy and what limits it, abbreviated.
std::string occupancy_cell(const KernelProfile& k);

// "B8 H16 S4096 D64 bf16 causal": a problem as one label.
std::string problem_label(const Problem& p);

}  // namespace sdpa
