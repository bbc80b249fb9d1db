// `onnxsurgeon report`: one self-contained HTML page (inline CSS and SVG, no script, no
// network) showing what a pipeline did: op histogram before/after as a bar chart, the
// per-pass table, opsets, check results, and the graph around each rewrite, before and
// after (laid out by graphviz `dot` when it is installed; the page says so when not).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/inspect/inspect.h"
#include "core/pass/pass_manager.h"
#include "core/report/rewrite_regions.h"

namespace onnxsurgeon {

struct ReportCheck {
  std::string title;  // "numeric check (onnxruntime)", "target trt-10"
  bool ok = false;
  std::string detail;  // preformatted text
};

struct HtmlReportInput {
  std::string model_name, pipeline;
  InspectReport before, after;
  double seconds = 0;
  std::vector<PassRunReport> passes;
  std::vector<ReportCheck> checks;
  std::vector<RewriteRegion> regions;
  // compare --html: the per-tensor error plot (core/report/error_plot.h) and what it
  // shows, drawn after the checks; the page then has no pass table.
  std::string error_plot_svg, error_plot_caption;
  bool show_passes = true;
};

// Renders each region's DOT with `dot -Tsvg`. Result the SVGs (before, after) per region,
// or an empty list and a note when dot is not installed or fails.
struct RenderedRegion {
  std::string title, svg_before, svg_after;
};
std::vector<RenderedRegion> RenderRegions(const std::vector<RewriteRegion>& regions, std::string& note);

std::string RenderHtmlReport(const HtmlReportInput& input);

// The inline SVG bar chart: per op, a before bar and an after bar (top max_ops ops).
std::string OpHistogramSvg(const std::map<std::string, int64_t>& before, const std::map<std::string, int64_t>& after,
                           size_t max_ops = 40);

std::string HtmlEscape(const std::string& text);

}  // namespace onnxsurgeon
