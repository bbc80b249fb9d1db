#include "core/report/error_plot.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/report/html_report.h"

namespace onnxsurgeon {

double ToleranceRatio(const TensorComparison& row) {
  if (!row.computed) return 0;
  // A row judged off is over 1 whatever its worst finite element says (NaN, infinity).
  return row.problem.empty() ? row.ratio : std::max(row.ratio, 1.5);
}

std::string TensorErrorPlotSvg(const CompareResult& r) {
  std::vector<std::pair<size_t, double>> points;  // row index, ratio
  for (size_t i = 0; i < r.rows.size(); ++i)
    if (r.rows[i].computed) points.emplace_back(i, ToleranceRatio(r.rows[i]));
  if (points.empty()) return "<p>No tensor was compared.</p>\n";
  // y: log10(ratio) from 1e-6 (and below: drawn at the floor) to the largest ratio.
  constexpr double kFloor = -6;
  double top = 1;
  for (const auto& [_, ratio] : points) top = std::max(top, std::ceil(std::log10(std::max(ratio, 1e-12))));
  const double width = 900, height = 280, left = 60, right = 20, up = 20, down = 40;
  const double plot_w = width - left - right, plot_h = height - up - down;
  const size_t n = r.rows.size();
  auto x_of = [&](size_t i) { return left + (n <= 1 ? plot_w / 2 : plot_w * static_cast<double>(i) / (n - 1)); };
  auto y_of = [&](double ratio) {
    double e = ratio > 0 ? std::max(std::log10(ratio), kFloor) : kFloor;
    return up + plot_h * (top - e) / (top - kFloor);
  };
  std::string s = absl::StrFormat(
      "<svg class=\"errplot\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "role=\"img\" aria-label=\"error relative to tolerance per tensor\">\n",
      width, height);
  // Axes and decades.
  for (double e = kFloor; e <= top; e += 1) {
    double y = y_of(std::pow(10, e));
    absl::StrAppendFormat(&s,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%s1e%d</text>\n",
                          left, y, left + plot_w, y, left - 4, y + 3, e == kFloor ? "&#8804;" : "",
                          static_cast<int>(e));
  }
  double y1 = y_of(1);
  absl::StrAppendFormat(&s,
                        "<line class=\"tolerance\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c00\" "
                        "stroke-dasharray=\"4 3\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                        "fill=\"#c00\">tolerance</text>\n",
                        left, y1, left + plot_w, y1, left + plot_w - 50, y1 - 4);
  // The curve, then the points (red over tolerance).
  std::string path;
  for (const auto& [i, ratio] : points)
    absl::StrAppendFormat(&path, "%s%.1f,%.1f", path.empty() ? "M" : " L", x_of(i), y_of(ratio));
  absl::StrAppend(&s, "<path d=\"", path, "\" fill=\"none\" stroke=\"#89a\" stroke-width=\"1\"/>\n");
  for (const auto& [i, ratio] : points) {
    const TensorComparison& row = r.rows[i];
    absl::StrAppendFormat(
        &s, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>%s (%s): max abs %g</title></circle>\n",
        x_of(i), y_of(ratio), row.ok() ? "#369" : "#c00", HtmlEscape(row.pair.a), HtmlEscape(row.pair.a_op),
        row.max_abs);
  }
  if (r.first_divergence >= 0) {
    const TensorComparison& row = r.rows[r.first_divergence];
    double x = x_of(r.first_divergence);
    absl::StrAppendFormat(&s,
                          "<line class=\"first-divergence\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                          "stroke=\"#c00\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#c00\" "
                          "text-anchor=\"%s\">first divergence: %s (%s)</text>\n",
                          x, up, x, up + plot_h, x + (x > width / 2 ? -4 : 4), up + 12, x > width / 2 ? "end" : "start",
                          HtmlEscape(row.pair.a), HtmlEscape(row.pair.a_op));
  }
  absl::StrAppendFormat(&s,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">tensors in model A's "
                        "topological order (%d compared)</text>\n",
                        left + plot_w / 2, height - 8, static_cast<int>(points.size()));
  absl::StrAppend(&s, "</svg>\n");
  return s;
}

}  // namespace onnxsurgeon
