// onnxsurgeon inspect [--json] IN: the health report (core/inspect).
#include <iostream>

#include "cli/common.h"
#include "core/inspect/inspect.h"
#include "core/io/model_io.h"

namespace onnxsurgeon::cli {

int RunInspect(const std::vector<std::string>& args) {
  CLI::App app{"Health report: opsets, ops, interface, custom ops, external data, ops without a schema.",
               "onnxsurgeon inspect"};
  bool json = false;
  std::string input;
  app.add_flag("--json", json, "machine-readable report on stdout");
  app.add_option("model", input, "the model")->required();
  if (auto code = ParseArguments(app, "inspect", args)) return *code;
  auto model = LoadModel(input);
  if (!model.ok()) return ModelError(model.status());
  InspectReport report = Inspect(**model);
  std::cout << (json ? FormatInspectJson(report) : FormatInspectText(report));
  return kOk;
}

}  // namespace onnxsurgeon::cli
