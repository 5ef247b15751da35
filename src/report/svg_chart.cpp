#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace sdpa {
namespace {

// Tableau 10: distinct, readable on white and on dark grey.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr std::size_t kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);
constexpr double kWidth = 960;
constexpr double kCharWidth = 6.6;  // of the 12px sans-serif labels, for placing the legend

std::string svg_open(const std::string& id, const std::string& title, double height) {
  return fmt::format(
      "<svg class=\"chart\" id=\"{}\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"{:.0f}\" "
      "height=\"{:.0f}\" role=\"img\" "
      "aria-label=\"{}\">\n<text class=\"chart-title\" x=\"{:.0f}\" y=\"20\" "
      "text-anchor=\"middle\">{}</text>\n",
      html_escape(id), kWidth, height, kWidth, height, html_escape(title), kWidth / 2,
      html_escape(title));
}

std::string text_at(double x, double y, const std::string& text, const char* anchor,
                    const char* css_class = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}>{}</text>\n", x, y,
                     anchor, *css_class ? fmt::format(" class=\"{}\"", css_class) : "",
                     html_escape(text));
}

// The smallest 1, 2 or 5 times a power of ten at or above `v` (> 0).
double nice_ceiling(double v) {
  const double decade = std::pow(10.0, std::floor(std::log10(v)));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (m * decade >= v * (1 - 1e-9)) return m * decade;
  return 10 * decade;
}

std::string number_label(double v) {
  return fmt::format("{:g}", v);
}

const char* colour(std::size_t i) {
  return chart_colour(i);
}

// Legend entries laid out left to right from (x, y), wrapping at the chart's width; returns the
// y under the last line.
double legend_row(std::string& out, const std::vector<std::string>& keys,
                  const std::vector<std::string>& colours, double x0, double y) {
  double x = x0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const double entry = 18 + kCharWidth * static_cast<double>(keys[i].size()) + 14;
    if (x + entry > kWidth - 10 && x > x0) {
      x = x0;
      y += 18;
    }
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n",
                       x, y - 10, i < colours.size() ? colours[i].c_str() : colour(i));
    out += text_at(x + 16, y, keys[i], "start");
    x += entry;
  }
  return y + 18;
}

}  // namespace

const char* chart_colour(std::size_t i) {
  return kPalette[i % kPaletteSize];
}

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string svg_line_chart(const LineChart& chart) {
  constexpr double left = 70, top = 40, plot_w = 600, plot_h = 280;
  const double legend_x = left + plot_w + 24;
  const double height =
      std::max(top + plot_h + 55, top + 18.0 * static_cast<double>(chart.series.size()) + 20);

  std::set<double> xs;
  double y_min = INFINITY, y_max = 0;
  for (const ChartSeries& s : chart.series)
    for (const auto& [x, y] : s.points)
      if (x > 0 && y > 0) {
        xs.insert(x);
        y_min = std::min(y_min, y);
        y_max = std::max(y_max, y);
      }
  if (chart.reference && chart.reference->second > 0) {
    y_min = std::min(y_min, chart.reference->second);
    y_max = std::max(y_max, chart.reference->second);
  }
  std::string out = svg_open(chart.id, chart.title, height);
  if (xs.empty())
    return out + text_at(kWidth / 2, top + plot_h / 2, "no timed cases", "middle") + "</svg>\n";

  const double lx_lo = std::log2(*xs.begin()) - (xs.size() == 1 ? 1 : 0.25);
  const double lx_hi = std::log2(*xs.rbegin()) + (xs.size() == 1 ? 1 : 0.25);
  double ly_lo = std::floor(std::log10(y_min));
  double ly_hi = std::ceil(std::log10(y_max));
  if (ly_hi <= ly_lo) ly_hi = ly_lo + 1;
  const auto px = [&](double x) {
    return left + (std::log2(x) - lx_lo) / (lx_hi - lx_lo) * plot_w;
  };
  const auto py = [&](double y) {
    return top + plot_h - (std::log10(y) - ly_lo) / (ly_hi - ly_lo) * plot_h;
  };

  out += fmt::format(
      "<rect class=\"plot\" x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"{:.0f}\"/>\n", left,
      top, plot_w, plot_h);
  for (double d = ly_lo; d <= ly_hi; ++d)
    for (const double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, d);
      if (std::log10(v) > ly_hi + 1e-9) continue;
      out += fmt::format(
          "<line class=\"grid\" x1=\"{:.0f}\" x2=\"{:.0f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>\n", left,
          left + plot_w, py(v), py(v));
      out += text_at(left - 6, py(v) + 4, number_label(v), "end");
    }
  for (const double x : xs) {
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.0f}\" y2=\"{:.0f}\"/>\n", px(x),
        px(x), top, top + plot_h);
    out += text_at(px(x), top + plot_h + 16, number_label(x), "middle");
  }
  out += text_at(left + plot_w / 2, top + plot_h + 38, chart.x_label, "middle", "axis-label");
  out += fmt::format(
      "<text class=\"axis-label\" transform=\"translate(18 {:.0f}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text>\n",
      top + plot_h / 2, html_escape(chart.y_label));
  if (chart.reference && chart.reference->second > 0) {
    const double y = py(chart.reference->second);
    out += fmt::format(
        "<line class=\"reference\" x1=\"{:.0f}\" x2=\"{:.0f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>\n",
        left, left + plot_w, y, y);
    out += text_at(left + plot_w - 4, y - 5, chart.reference->first, "end", "reference-label");
  }
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    std::vector<std::pair<double, double>> points;
    for (const auto& p : chart.series[i].points)
      if (p.first > 0 && p.second > 0) points.push_back(p);
    std::sort(points.begin(), points.end());
    std::string polyline;
    for (const auto& [x, y] : points) polyline += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
    out += fmt::format(
        "<g class=\"series\"><polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
        "points=\"{}\"/>\n",
        colour(i), polyline);
    for (const auto& [x, y] : points)
      out += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}: {:g}, "
          "{:.1f}</title></circle>\n",
          px(x), py(y), colour(i), html_escape(chart.series[i].label), x, y);
    out += "</g>\n";
    const double ly = top + 18.0 * static_cast<double>(i) + 6;
    out += fmt::format("<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"14\" height=\"3\" fill=\"{}\"/>\n",
                       legend_x, ly - 4, colour(i));
    out += text_at(legend_x + 20, ly + 1, chart.series[i].label, "start");
  }
  return out + "</svg>\n";
}

std::string svg_roofline_chart(const RooflineChart& chart) {
  constexpr double left = 70, top = 40, plot_w = 600, plot_h = 300;
  const double legend_x = left + plot_w + 24;
  const double height =
      std::max(top + plot_h + 55, top + 18.0 * static_cast<double>(chart.series.size()) + 20);
  std::string out = svg_open(chart.id, chart.title, height);
  if (!(chart.compute_tflops > 0) || !(chart.read_tb_per_s > 0))
    return out + text_at(kWidth / 2, top + plot_h / 2, "no ceilings recorded", "middle") + "</svg>\n";
  const double ridge = chart.compute_tflops / chart.read_tb_per_s;
  // Decades around the points and the ridge: x from intensity, y from TFLOP/s up to the roof.
  double x_min = ridge, x_max = ridge, y_min = chart.compute_tflops, y_max = chart.compute_tflops;
  for (const ChartSeries& s : chart.series)
    for (const auto& [x, y] : s.points)
      if (x > 0 && y > 0) {
        x_min = std::min(x_min, x);
        x_max = std::max(x_max, x);
        y_min = std::min(y_min, y);
      }
  const double lx_lo = std::floor(std::log10(x_min)), lx_hi = std::max(std::ceil(std::log10(x_max)), lx_lo + 1);
  const double ly_lo = std::floor(std::log10(std::min(y_min, chart.read_tb_per_s * std::pow(10.0, lx_lo))));
  const double ly_hi = std::max(std::ceil(std::log10(y_max * 1.0001)), ly_lo + 1);
  const auto px = [&](double x) { return left + (std::log10(x) - lx_lo) / (lx_hi - lx_lo) * plot_w; };
  const auto py = [&](double y) { return top + plot_h - (std::log10(y) - ly_lo) / (ly_hi - ly_lo) * plot_h; };

  out += fmt::format(
      "<rect class=\"plot\" x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"{:.0f}\"/>\n", left,
      top, plot_w, plot_h);
  for (double d = ly_lo; d <= ly_hi; ++d) {
    const double v = std::pow(10.0, d);
    out += fmt::format("<line class=\"grid\" x1=\"{:.0f}\" x2=\"{:.0f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>\n", left,
                       left + plot_w, py(v), py(v));
    out += text_at(left - 6, py(v) + 4, number_label(v), "end");
  }
  for (double d = lx_lo; d <= lx_hi; ++d) {
    const double v = std::pow(10.0, d);
    out += fmt::format("<line class=\"grid\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.0f}\" y2=\"{:.0f}\"/>\n",
                       px(v), px(v), top, top + plot_h);
    out += text_at(px(v), top + plot_h + 16, number_label(v), "middle");
  }
  out += text_at(left + plot_w / 2, top + plot_h + 38,
                 "arithmetic intensity (FLOP per byte a call must move)", "middle", "axis-label");
  out += fmt::format(
      "<text class=\"axis-label\" transform=\"translate(18 {:.0f}) rotate(-90)\" "
      "text-anchor=\"middle\">TFLOP/s</text>\n",
      top + plot_h / 2);
  // The roof: bandwidth times intensity up to the ridge, then the compute ceiling.
  const double x_lo = std::pow(10.0, lx_lo), x_hi = std::pow(10.0, lx_hi);
  out += fmt::format(
      "<polyline class=\"reference\" fill=\"none\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"/>\n",
      px(x_lo), py(chart.read_tb_per_s * x_lo), px(ridge), py(chart.compute_tflops), px(x_hi),
      py(chart.compute_tflops));
  out += text_at(left + plot_w - 4, py(chart.compute_tflops) - 5,
                 fmt::format("GEMM ceiling {:.0f} TFLOP/s", chart.compute_tflops), "end", "reference-label");
  out += text_at(px(ridge) - 6, py(chart.compute_tflops) + 14,
                 fmt::format("HBM read {:.2f} TB/s, ridge {:.0f} FLOP/B", chart.read_tb_per_s, ridge), "end",
                 "reference-label");
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    out += "<g class=\"series\">\n";
    for (const auto& [x, y] : chart.series[i].points)
      if (x > 0 && y > 0)
        out += fmt::format(
            "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"><title>{}: {:.3g} FLOP/B, "
            "{:.3g} TFLOP/s</title></circle>\n",
            px(x), py(y), colour(i), html_escape(chart.series[i].label), x, y);
    out += "</g>\n";
    const double ly = top + 18.0 * static_cast<double>(i) + 6;
    out += fmt::format("<circle cx=\"{:.0f}\" cy=\"{:.0f}\" r=\"4\" fill=\"{}\"/>\n", legend_x + 7, ly - 3,
                       colour(i));
    out += text_at(legend_x + 20, ly + 1, chart.series[i].label, "start");
  }
  return out + "</svg>\n";
}

std::string svg_bar_chart(const BarChart& chart) {
  constexpr double label_w = 260, bar_w = 520, row_h = 18, bar_h = 13;
  std::string legend;
  const double legend_end = legend_row(legend, chart.keys, chart.colours, 20, 44);
  const double rows_top = legend_end + 4;
  const double height = rows_top + row_h * static_cast<double>(chart.rows.size()) + 44;
  std::string out = svg_open(chart.id, chart.title, height) + legend;

  double max_total = 0;
  for (const BarRow& r : chart.rows) {
    double total = 0;
    for (const double v : r.values) total += v;
    max_total = std::max(max_total, total);
  }
  const double axis_max = chart.as_share ? 1.0 : max_total > 0 ? nice_ceiling(max_total) : 1.0;
  const double axis_y = rows_top + row_h * static_cast<double>(chart.rows.size()) + 4;
  for (int i = 0; i <= 4; ++i) {
    const double v = axis_max * i / 4;
    const double x = label_w + bar_w * i / 4;
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.0f}\" y2=\"{:.0f}\"/>\n", x, x,
        rows_top, axis_y);
    out += text_at(x, axis_y + 14,
                   chart.as_share ? fmt::format("{:.0f}%", 100 * v) : number_label(v), "middle");
  }
  out += text_at(label_w + bar_w / 2, axis_y + 32, chart.axis_label, "middle", "axis-label");

  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    const BarRow& row = chart.rows[r];
    const double y = rows_top + row_h * static_cast<double>(r);
    double total = 0;
    for (const double v : row.values) total += v;
    const double scale = bar_w / (chart.as_share ? (total > 0 ? total : 1) : axis_max);
    out += text_at(label_w - 8, y + bar_h - 2, row.label, "end");
    double x = label_w;
    for (std::size_t k = 0; k < row.values.size() && k < chart.keys.size(); ++k) {
      if (row.values[k] <= 0) continue;
      const std::string tip =
          k < row.tips.size() ? row.tips[k] : fmt::format("{}: {:g}", chart.keys[k], row.values[k]);
      out += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.0f}\" "
          "fill=\"{}\"><title>{}</title></rect>\n",
          x, y, row.values[k] * scale, bar_h,
          k < chart.colours.size() ? chart.colours[k].c_str() : colour(k),
          html_escape(row.label + ": " + tip));
      x += row.values[k] * scale;
    }
    out += text_at((chart.as_share ? label_w + bar_w : x) + 6, y + bar_h - 2, row.note, "start",
                   "note");
  }
  return out + "</svg>\n";
}

std::string svg_change_chart(const ChangeChart& chart) {
  constexpr double label_w = 260, half_w = 260, row_h = 20, bar_h = 12, top = 36;
  const double zero_x = label_w + half_w;
  const double height = top + row_h * static_cast<double>(chart.rows.size()) + 48;
  std::string out = svg_open(chart.id, chart.title, height);
  double reach = 2 * chart.threshold;
  for (const ChangeRow& r : chart.rows) reach = std::max(reach, std::abs(r.change) + r.noise);
  reach = nice_ceiling(std::max(reach, 0.01));
  const auto px = [&](double change) {
    return zero_x + std::clamp(change / reach, -1.0, 1.0) * half_w;
  };
  const double bottom = top + row_h * static_cast<double>(chart.rows.size());

  for (int i = -2; i <= 2; ++i) {
    const double v = reach * i / 2;
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.0f}\" y2=\"{:.0f}\"/>\n", px(v),
        px(v), top, bottom);
    out += text_at(px(v), bottom + 14, fmt::format("{:+.0f}%", 100 * v), "middle");
  }
  for (const double t : {-chart.threshold, chart.threshold})
    out += fmt::format(
        "<line class=\"reference\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.0f}\" y2=\"{:.0f}\"/>\n",
        px(t), px(t), top, bottom);
  out += text_at(zero_x, bottom + 32,
                 fmt::format("change of the median (faster \xE2\x86\x90 \xE2\x86\x92 slower); "
                             "dashed: the {:.1f}% threshold",
                             100 * chart.threshold),
                 "middle", "axis-label");
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    const ChangeRow& row = chart.rows[r];
    const double y = top + row_h * static_cast<double>(r);
    const char* fill = row.regression                  ? "#d62728"
                       : row.change < -chart.threshold ? "#2ca02c"
                                                       : "#7f7f7f";
    const double x0 = std::min(px(0), px(row.change));
    out += text_at(label_w - 8, y + bar_h, row.label, "end");
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\"><title>{}: "
        "{:+.1f}% (noise "
        "{:.1f}%)</title></rect>\n",
        x0, y + 2, std::abs(px(row.change) - px(0)), bar_h, fill, html_escape(row.label),
        100 * row.change, 100 * row.noise);
    out += fmt::format(
        "<line class=\"noise\" x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>\n",
        px(row.change - row.noise), px(row.change + row.noise), y + 2 + bar_h / 2,
        y + 2 + bar_h / 2);
  }
  return out + "</svg>\n";
}

}  // namespace sdpa
