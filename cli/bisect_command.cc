// onnxsurgeon bisect --pass PIPELINE IN [-o REPRO.onnx]: when the pipeline's output
// computes something else than its input (judged as --check judges), names the first pass,
// then the first step within it (rule application, folded node), the nodes it rewrote, and
// writes a small model that reproduces it (core/verify/bisect.h).
// Exit 0 when the output is within tolerance of the input, 1 when it is not (the
// bisection's findings on stdout) or a pass fails, 2 on a usage error.
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "cli/input_shapes.h"
#include "core/io/model_io.h"
#include "core/pass/pipeline.h"
#include "core/verify/bisect.h"

namespace onnxsurgeon::cli {

int RunBisect(const std::vector<std::string>& args) {
  CLI::App app{
      "When a pipeline changes what a model computes (outputs beyond --check's tolerance), finds the first pass, "
      "then the first rule application or step within it, names the nodes it rewrote and writes a small model "
      "reproducing it.",
      "onnxsurgeon bisect"};
  std::vector<std::string> passes, input_shapes;
  std::string input, output;
  BisectOptions options;
  bool json = false, no_widen = false;
  app.add_option("--pass", passes, "passes to run, repeatable (pipeline grammar, docs/pipeline.md)")
      ->required()
      ->allow_extra_args(false);
  app.add_option("-o,--output", output, "write the reproducer there (the step's region, before the step)");
  app.add_option("--inputs", options.compare.inputs_file,
                 "inputs to run on (.npz keyed by input name); default random");
  app.add_option("--input-shapes", input_shapes,
                 "NAME:1,3,224,224 for random inputs, repeatable (symbolic dims default to 2)")
      ->allow_extra_args(false);
  app.add_option("--seed", options.compare.seed, "random seed for the inputs (default 0)");
  app.add_flag("--no-widen", no_widen,
               "judge approximating passes (rewrite-gelu, rewrite-erf, convert-float16) by the plain tolerance table: "
               "find where their approximation enters");
  app.add_flag("--json", json, "machine-readable result on stdout");
  app.add_option("model", input, "the model")->required();
  if (auto code = ParseArguments(app, "bisect", args)) return *code;
  options.widen = !no_widen;
  auto pipeline = ParsePipeline(absl::StrJoin(passes, ","));
  if (!pipeline.ok()) return UsageError("bisect", absl::StrCat("--pass: ", pipeline.status().message()));
  auto model = LoadModel(input);
  if (!model.ok()) return ModelError(model.status());
  if (!output.empty()) {
    if (Status s = CheckSaveTarget(**model, output); !s.ok()) return ModelError(s);
  }
  if (!input_shapes.empty()) {
    auto specs = ParseInputShapeArgs(input_shapes);
    if (!specs.ok()) return UsageError("bisect", std::string(specs.status().message()));
    auto resolved = ResolveInputShapes(*specs, **model);
    if (!resolved.ok()) return UsageError("bisect", std::string(resolved.status().message()));
    options.compare.input_shapes = *resolved;
  }
  auto result = Bisect(**model, *pipeline, options);
  if (!result.ok()) {
    std::cerr << "onnxsurgeon: error: bisect: " << result.status().message() << "\n";
    return kModelError;
  }
  if (!output.empty() && result->reproducer) {
    if (Status s = SaveModel(*result->reproducer, output); !s.ok()) return ModelError(s);
  }
  if (json) {
    Json j = BisectToJson(*result);
    j["reproducer"] = !output.empty() && result->reproducer ? Json(output) : Json();
    std::cout << DumpJson(j, 2) << "\n";
  } else {
    std::cout << FormatBisectText(*result);
    if (!output.empty() && result->reproducer) {
      std::cout << "  reproducer: " << output << " (" << result->reproducer_nodes << " nodes)\n";
    }
  }
  return result->differs ? kModelError : kOk;
}

}  // namespace onnxsurgeon::cli
