// onnxsurgeon compare A B | A --backend NAME | A --reference OUT.npz: where do two models
// (or a model and a backend, or a model and its framework's outputs) part? Runs both on
// the same inputs with intermediate tensors exposed and names the first tensor that
// drifts beyond tolerance, with the node that made it (core/verify/compare.h).
// Exit 0 when every compared tensor is within tolerance, 1 when one is not (or a model
// fails to load or run), 2 on a usage error.
#include <algorithm>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "cli/input_shapes.h"
#include "core/inspect/inspect.h"
#include "core/io/atomic_file.h"
#include "core/io/model_io.h"
#include "core/report/error_plot.h"
#include "core/report/html_report.h"
#include "core/report/rewrite_regions.h"
#include "core/util/suggest.h"
#include "core/verify/compare.h"

namespace onnxsurgeon::cli {
namespace {

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  OS_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(path));
  OS_RETURN_IF_ERROR(file->Write(text));
  return file->Commit();
}

// The report page (core/report/html_report.h) with the error plot in place of passes.
std::string ComparePage(const CompareResult& r, const Model& a, const Model* b) {
  HtmlReportInput in;
  in.model_name = absl::StrCat(r.a_label, " vs ", r.b_label);
  in.pipeline = "compare";
  in.before = Inspect(a);
  in.after = b ? Inspect(*b) : in.before;
  in.checks.push_back({absl::StrCat("compare (", r.runtime, r.b_runtime.empty() ? "" : " vs " + r.b_runtime, ")"),
                       r.ok(), FormatCompareText(r, 12)});
  if (b) in.regions = FindRewriteRegions(a, *b);
  in.error_plot_svg = TensorErrorPlotSvg(r);
  in.error_plot_caption =
      "Each point is a tensor of model A (in topological order) paired with B's: its worst error relative to "
      "tolerance, |a - b| / (atol + rtol |b|), on a log scale. Over the dashed line is outside tolerance.";
  in.show_passes = false;
  return RenderHtmlReport(in);
}

}  // namespace

int RunCompare(const std::vector<std::string>& args) {
  CLI::App app{
      "Runs two models (or a model in onnxruntime and in a backend, or a model against reference outputs) on the "
      "same inputs with their intermediate tensors exposed, and names the first tensor that drifts beyond "
      "tolerance, with the node that made it.",
      "onnxsurgeon compare"};
  std::string a_path, b_path, html, backend, reference, inputs;
  std::vector<std::string> input_shapes;
  CompareOptions options;
  bool json = false;
  size_t max_rows = 20;
  app.add_option("a", a_path, "the model (the reference side: the original, the export)")->required();
  app.add_option("b", b_path, "the model to compare with it (a rewrite of A)");
  app.add_option(
      "--backend", backend,
      absl::StrCat("run A in onnxruntime and in this backend's venv (", absl::StrJoin(CompareBackends(), ", "), ")"));
  app.add_option("--reference", reference, "compare A's tensors with these arrays (.npz keyed by tensor name)");
  app.add_option("--inputs", inputs, "inputs to run on (.npz keyed by input name); default random");
  app.add_option("--input-shapes", input_shapes,
                 "NAME:1,3,224,224 for random inputs, repeatable (symbolic dims default to 2)")
      ->allow_extra_args(false);
  app.add_option("--seed", options.seed, "random seed for the inputs (default 0)");
  app.add_option("--batch", options.batch, "tensors exposed per segment run (default 64): bounds memory")
      ->check(CLI::PositiveNumber);
  app.add_flag("--outputs-only", options.outputs_only, "compare the graph outputs only");
  app.add_flag("--fp16-tolerance", options.fp16_tolerance,
               "judge every float tensor with float16's tolerance (B is a convert-float16 result, as --check does)");
  app.add_flag("--json", json, "machine-readable report on stdout (every tensor)");
  app.add_option("--html", html, "write the report page with the per-tensor error plot");
  app.add_option("--max-rows", max_rows, "tensors listed in the text report (default 20)");
  if (auto code = ParseArguments(app, "compare", args)) return *code;
  const int sources = !b_path.empty() + !backend.empty() + !reference.empty();
  if (sources != 1)
    return UsageError("compare", "give exactly one of: a second model B, --backend NAME, --reference FILE");
  if (!reference.empty() && !b_path.empty()) return UsageError("compare", "--reference replaces B");
  if (!backend.empty()) {
    const std::vector<std::string> known = CompareBackends();
    if (std::find(known.begin(), known.end(), backend) == known.end()) {
      auto match = ClosestMatch(backend, known);
      return UsageError("compare", absl::StrCat("--backend: no backend named '", backend, "'",
                                                match ? absl::StrCat(" (did you mean '", *match, "'?)") : "",
                                                "; known: ", absl::StrJoin(known, ", ")));
    }
  }
  options.backend = backend;
  options.reference_file = reference;
  options.inputs_file = inputs;

  auto a = LoadModel(a_path);
  if (!a.ok()) return ModelError(a.status());
  std::unique_ptr<Model> b;
  if (!b_path.empty()) {
    auto loaded = LoadModel(b_path);
    if (!loaded.ok()) return ModelError(loaded.status());
    b = *std::move(loaded);
  }
  if (!input_shapes.empty()) {
    auto specs = ParseInputShapeArgs(input_shapes);
    if (!specs.ok()) return UsageError("compare", std::string(specs.status().message()));
    auto resolved = ResolveInputShapes(*specs, **a);
    if (!resolved.ok()) return UsageError("compare", std::string(resolved.status().message()));
    options.input_shapes = *resolved;
  }
  auto result = CompareModels(**a, b.get(), options);
  if (!result.ok()) {
    std::cerr << "onnxsurgeon: error: compare: " << result.status().message() << "\n";
    return kModelError;
  }
  result->a_label = a_path;
  result->b_label = !b_path.empty() ? b_path : !backend.empty() ? absl::StrCat(a_path, " in ", backend) : reference;
  if (!html.empty()) {
    if (Status s = WriteFileAtomically(html, ComparePage(*result, **a, b.get())); !s.ok()) {
      std::cerr << "onnxsurgeon: error: compare: cannot write " << html << ": " << s.message() << "\n";
      return kModelError;
    }
  }
  if (json) {
    std::cout << DumpJson(CompareToJson(*result), 2) << "\n";
  } else {
    std::cout << FormatCompareText(*result, max_rows);
  }
  return result->ok() ? kOk : kModelError;
}

}  // namespace onnxsurgeon::cli
