// Charts as inline SVG text, drawn by the tool itself (no library, no script, no network), for
// the HTML pages: lines on logarithmic axes, and horizontal bars (stacked or diverging).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sdpa {

struct ChartSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), both > 0
};

// y against x, both on log axes (x base 2, ticks at the x values present; y decades in 1-2-5
// steps), one coloured line per series, a legend at the right, and an optional dashed line
// across (a ceiling).
struct LineChart {
  std::string id{};  // the svg element's id
  std::string title{};
  std::string x_label{};
  std::string y_label{};
  std::vector<ChartSeries> series{};
  std::optional<std::pair<std::string, double>> reference{};  // label and y value
};
std::string svg_line_chart(const LineChart& chart);

// Attainable TFLOP/s against arithmetic intensity (FLOP per byte), both on log axes: one dot per
// point of each series, under the roof min(compute, bandwidth x intensity) drawn dashed, with
// the ridge point where the two meet.
struct RooflineChart {
  std::string id{};
  std::string title{};
  double compute_tflops = 0;  // the flat roof
  double read_tb_per_s = 0;   // the slanted roof's slope
  std::vector<ChartSeries> series{};  // (intensity, TFLOP/s) per point
};
std::string svg_roofline_chart(const RooflineChart& chart);

struct BarRow {
  std::string label;
  std::vector<double> values;     // one per key of the chart, >= 0
  std::string note;               // at the end of the bar ("0.637 ms")
  std::vector<std::string> tips;  // per value, shown on hover; empty: "key: value"
};

// One horizontal bar per row, its values stacked in the keys' colours; `as_share` draws each row
// as 100% of itself (where the time goes), otherwise all rows share one linear axis.
struct BarChart {
  std::string id{};
  std::string title{};
  std::string axis_label{};
  std::vector<std::string> keys{};  // the legend, in stacking order
  std::vector<BarRow> rows{};
  bool as_share = false;
  std::vector<std::string> colours{};  // per key ("#1f77b4"); empty: the palette in key order
};
std::string svg_bar_chart(const BarChart& chart);

struct ChangeRow {
  std::string label;
  double change = 0;  // new / base - 1
  double noise = 0;   // drawn as a band around the bar's end
  bool regression = false;
};

// Changes around a zero line (faster to the left, slower to the right) with the threshold drawn
// on both sides: compare's verdicts at a glance.
struct ChangeChart {
  std::string id{};
  std::string title{};
  double threshold = 0.05;
  std::vector<ChangeRow> rows{};
};
std::string svg_change_chart(const ChangeChart& chart);

// The palette's i-th colour (Tableau 10), for a key that keeps its colour across charts.
const char* chart_colour(std::size_t i);

// Text safe inside HTML and SVG elements and attributes.
std::string html_escape(const std::string& text);

}  // namespace sdpa
