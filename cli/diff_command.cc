// onnxsurgeon diff A B [--json]: what changed between two models (core/diff). Exit 0 when
// both load, whether or not they differ ("identical" in the JSON says which).
#include <iostream>

#include "cli/common.h"
#include "core/diff/model_diff.h"
#include "core/io/model_io.h"

namespace onnxsurgeon::cli {

int RunDiff(const std::vector<std::string>& args) {
  CLI::App app{
      "What changed between two models: opsets, inputs/outputs, op counts, initializers, value types, "
      "nodes (matched by name, then by structure).",
      "onnxsurgeon diff"};
  std::string a, b;
  bool json = false;
  size_t max_rows = 50;
  app.add_flag("--json", json, "machine-readable diff on stdout (every row)");
  app.add_option("--max-rows", max_rows, "rows per section in the text diff (default 50)");
  app.add_option("before", a, "the first model")->required();
  app.add_option("after", b, "the second model")->required();
  if (auto code = ParseArguments(app, "diff", args)) return *code;
  auto before = LoadModel(a);
  if (!before.ok()) return ModelError(before.status());
  auto after = LoadModel(b);
  if (!after.ok()) return ModelError(after.status());
  ModelDiff diff = DiffModels(**before, **after);
  std::cout << (json ? DumpJson(DiffToJson(diff), 2) : FormatDiffText(diff, a, b, max_rows));
  return kOk;
}

}  // namespace onnxsurgeon::cli
