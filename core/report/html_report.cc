#include "core/report/html_report.h"

#include <algorithm>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/inspect/model_stats.h"
#include "core/util/subprocess.h"

namespace onnxsurgeon {

std::string HtmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string OpHistogramSvg(const std::map<std::string, int64_t>& before, const std::map<std::string, int64_t>& after,
                           size_t max_ops) {
  struct Row {
    std::string op;
    int64_t a, b;
  };
  std::set<std::string> ops;
  for (const auto& [op, n] : before) ops.insert(op);
  for (const auto& [op, n] : after) ops.insert(op);
  std::vector<Row> rows;
  for (const std::string& op : ops) {
    auto a = before.find(op), b = after.find(op);
    rows.push_back({op, a == before.end() ? 0 : a->second, b == after.end() ? 0 : b->second});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& x, const Row& y) { return std::max(x.a, x.b) > std::max(y.a, y.b); });
  size_t hidden = rows.size() > max_ops ? rows.size() - max_ops : 0;
  if (hidden) rows.resize(max_ops);
  int64_t top = 1;
  for (const Row& r : rows) top = std::max({top, r.a, r.b});
  const int label_w = 200, bar_w = 420, row_h = 26, bar_h = 10, legend_h = 24;
  int height = legend_h + static_cast<int>(rows.size()) * row_h + (hidden ? row_h : 0) + 6;
  int width = label_w + bar_w + 70;
  std::string svg = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
      "role=\"img\" aria-label=\"op histogram before and after\" font-family=\"sans-serif\" font-size=\"12\">\n",
      width, height, width, height);
  absl::StrAppend(&svg, "<rect x=\"", label_w, "\" y=\"4\" width=\"12\" height=\"10\" fill=\"#9aa4b1\"/><text x=\"",
                  label_w + 16, "\" y=\"13\">before</text><rect x=\"", label_w + 80,
                  "\" y=\"4\" width=\"12\" height=\"10\" "
                  "fill=\"#2a7be4\"/><text x=\"",
                  label_w + 96, "\" y=\"13\">after</text>\n");
  int y = legend_h;
  for (const Row& r : rows) {
    int wa = static_cast<int>(static_cast<double>(r.a) / top * bar_w),
        wb = static_cast<int>(static_cast<double>(r.b) / top * bar_w);
    bool changed = r.a != r.b;
    absl::StrAppend(&svg, "<g><title>", HtmlEscape(r.op), ": ", r.a, " -> ", r.b, "</title>");
    absl::StrAppend(&svg, absl::StrFormat("<text x=\"%d\" y=\"%d\" text-anchor=\"end\"%s>%s</text>", label_w - 8,
                                          y + 15, changed ? " font-weight=\"bold\"" : "", HtmlEscape(r.op)));
    absl::StrAppend(&svg, absl::StrFormat("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#9aa4b1\"/>",
                                          label_w, y + 2, std::max(wa, r.a ? 1 : 0), bar_h));
    absl::StrAppend(&svg, absl::StrFormat("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#2a7be4\"/>",
                                          label_w, y + 2 + bar_h + 1, std::max(wb, r.b ? 1 : 0), bar_h));
    absl::StrAppend(
        &svg, absl::StrFormat("<text x=\"%d\" y=\"%d\" fill=\"#333\">%s</text></g>\n", label_w + std::max(wa, wb) + 6,
                              y + 15, changed ? absl::StrCat(r.a, " \xe2\x86\x92 ", r.b) : absl::StrCat(r.a)));
    y += row_h;
  }
  if (hidden) absl::StrAppend(&svg, "<text x=\"", label_w, "\" y=\"", y + 15, "\">... ", hidden, " more ops</text>\n");
  absl::StrAppend(&svg, "</svg>\n");
  return svg;
}

std::vector<RenderedRegion> RenderRegions(const std::vector<RewriteRegion>& regions, std::string& note) {
  std::vector<RenderedRegion> out;
  if (regions.empty()) return out;
  if (!ProgramExists("dot")) {
    note =
        "graphviz is not installed, so the rewritten regions are not drawn: apt-get install graphviz "
        "(the `dot` program) and run the report again.";
    return out;
  }
  TempDir dir("onnxsurgeon-report");
  if (dir.path().empty()) {
    note = "could not create a temporary folder for graphviz";
    return out;
  }
  auto render = [&](const std::string& dot, std::string& svg) -> bool {
    std::ofstream(dir / "in.dot") << dot;
    int rc = RunProgram({"dot", "-Tsvg", dir / "in.dot"}, "", dir / "out.svg", dir / "err.txt");
    if (rc != 0) {
      note = absl::StrCat("graphviz dot failed (exit ", rc, "): ", ReadWholeFile(dir / "err.txt"));
      return false;
    }
    svg = ReadWholeFile(dir / "out.svg");
    // Inline SVG: drop the XML prolog and DOCTYPE dot writes before <svg.
    if (size_t at = svg.find("<svg"); at != std::string::npos) svg.erase(0, at);
    return true;
  };
  for (const RewriteRegion& r : regions) {
    RenderedRegion rr{r.title, "", ""};
    if (!render(r.dot_before, rr.svg_before) || !render(r.dot_after, rr.svg_after)) return {};
    out.push_back(std::move(rr));
  }
  return out;
}

namespace {

const char* kStyle = R"(<style>
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:24px auto;max-width:1100px;color:#1d2430;padding:0 16px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #dde3ea;padding-bottom:4px}
.sub{color:#5a6472;margin-top:0}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #dde3ea;padding:4px 8px;text-align:left;vertical-align:top}th{background:#f3f6f9}
td.n{text-align:right;font-variant-numeric:tabular-nums}.ok{color:#13795b;font-weight:bold}.bad{color:#b42318;font-weight:bold}
pre{background:#f6f8fa;padding:8px;border-radius:4px;font-size:12px;overflow:auto}
.region{display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap}.region>div{flex:1;min-width:300px;overflow:auto;border:1px solid #dde3ea;border-radius:4px;padding:4px}
.region svg{max-width:100%;height:auto}.note{background:#fff7e6;border:1px solid #f5c26b;padding:8px;border-radius:4px}
</style>
)";

std::string Cell(const std::string& s, bool number = false) {
  return absl::StrCat(number ? "<td class=\"n\">" : "<td>", HtmlEscape(s), "</td>");
}

}  // namespace

std::string RenderHtmlReport(const HtmlReportInput& in) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  absl::StrAppend(&h, "<title>onnxsurgeon report: ", HtmlEscape(in.model_name), "</title>\n", kStyle,
                  "</head><body>\n");
  absl::StrAppend(&h, "<h1>onnxsurgeon report: ", HtmlEscape(in.model_name), "</h1>\n<p class=\"sub\">pipeline <code>",
                  HtmlEscape(in.pipeline.empty() ? "(none)" : in.pipeline), "</code>, ",
                  absl::StrFormat("%.2f", in.seconds), " s</p>\n");

  // Summary numbers.
  absl::StrAppend(&h, "<h2>Summary</h2>\n<table><tr><th></th><th>before</th><th>after</th></tr>\n");
  auto row = [&](const std::string& what, const std::string& a, const std::string& b) {
    absl::StrAppend(&h, "<tr><th>", HtmlEscape(what), "</th>", Cell(a, true), Cell(b, true), "</tr>\n");
  };
  row("nodes", absl::StrCat(in.before.total_node_count), absl::StrCat(in.after.total_node_count));
  row("initializers", absl::StrCat(in.before.initializer_count, " (", HumanBytes(in.before.initializer_bytes), ")"),
      absl::StrCat(in.after.initializer_count, " (", HumanBytes(in.after.initializer_bytes), ")"));
  row("opsets", OpsetsText(in.before), OpsetsText(in.after));
  row("ir_version", absl::StrCat(in.before.ir_version), absl::StrCat(in.after.ir_version));
  absl::StrAppend(&h, "</table>\n");

  if (!in.error_plot_svg.empty()) {
    absl::StrAppend(&h, "<h2>Where the models diverge</h2>\n<p class=\"sub\">", HtmlEscape(in.error_plot_caption),
                    "</p>\n<div class=\"errplot-box\">", in.error_plot_svg, "</div>\n");
  }

  // Checks.
  absl::StrAppend(&h, "<h2>Checks</h2>\n");
  if (in.checks.empty()) {
    absl::StrAppend(&h,
                    "<p>No check was run (add <code>--check</code> for a numeric comparison in onnxruntime).</p>\n");
  }
  for (const ReportCheck& c : in.checks) {
    absl::StrAppend(&h, "<p><span class=\"", c.ok ? "ok" : "bad", "\">", c.ok ? "PASSED" : "FAILED", "</span> ",
                    HtmlEscape(c.title), "</p>\n");
    if (!c.detail.empty()) absl::StrAppend(&h, "<pre>", HtmlEscape(c.detail), "</pre>\n");
  }

  // Op histogram.
  absl::StrAppend(&h, "<h2>Op histogram</h2>\n", OpHistogramSvg(in.before.op_histogram, in.after.op_histogram));

  // Passes.
  if (in.show_passes) {
    absl::StrAppend(
        &h, "<h2>Passes</h2>\n<table><tr><th>pass</th><th>changed</th><th>time</th><th>what it did</th></tr>\n");
    for (const PassRunReport& p : in.passes) {
      std::vector<std::string> counts;
      for (const auto& [k, v] : p.result.counts) counts.push_back(absl::StrCat(k, " ", v));
      absl::StrAppend(&h, "<tr>", Cell(p.name), "<td class=\"", p.result.changed ? "ok\">yes" : "\">no", "</td>",
                      Cell(absl::StrFormat("%.1f ms", p.seconds * 1e3), true), Cell(absl::StrJoin(counts, ", ")),
                      "</tr>\n");
    }
    if (in.passes.empty()) absl::StrAppend(&h, "<tr><td colspan=\"4\">no pass ran</td></tr>\n");
    absl::StrAppend(&h, "</table>\n");
  }

  // Regions.
  absl::StrAppend(&h, "<h2>Rewritten regions</h2>\n");
  std::string note;
  std::vector<RenderedRegion> rendered = RenderRegions(in.regions, note);
  if (in.regions.empty()) absl::StrAppend(&h, "<p>The main graph's nodes are unchanged.</p>\n");
  if (!note.empty()) absl::StrAppend(&h, "<p class=\"note\">", HtmlEscape(note), "</p>\n");
  if (!note.empty()) {
    for (const RewriteRegion& r : in.regions) absl::StrAppend(&h, "<h3>", HtmlEscape(r.title), "</h3>\n");
  }
  for (const RenderedRegion& r : rendered) {
    absl::StrAppend(&h, "<h3>", HtmlEscape(r.title), "</h3>\n<div class=\"region\"><div>", r.svg_before, "</div><div>",
                    r.svg_after, "</div></div>\n");
  }
  absl::StrAppend(&h, "</body></html>\n");
  return h;
}

}  // namespace onnxsurgeon
