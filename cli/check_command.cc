// onnxsurgeon check --opset N [--json] IN: what would block converting the model to opset N,
// from the converter's own logic on a copy; nothing is written. Exit 0 when nothing
// blocks, 1 when something does.
// onnxsurgeon check --target NAME [--json] [--input-shapes S] IN: what that runtime refuses
// (cli/target_commands.cc).
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cli/common.h"
#include "cli/fact_probe.h"
#include "cli/target_commands.h"
#include "core/inspect/json.h"
#include "core/io/model_io.h"
#include "passes/opset/converter.h"

namespace onnxsurgeon::cli {

int RunCheck(const std::vector<std::string>& args) {
  CLI::App app{"What would block converting the model to opset N, or what target NAME refuses (nothing is written).",
               "onnxsurgeon check"};
  bool json = false, probe = false;
  int64_t target = 0;
  std::string input, target_name, input_shapes, allow;
  CLI::Option* opset = app.add_option("--opset", target, "the target opset");
  CLI::Option* profile =
      app.add_option("--target", target_name, "a target profile (onnxsurgeon targets) or .toml file");
  app.add_option("--input-shapes", input_shapes, "with --target: NAME:DIMS;... inputs that will have static shapes");
  app.add_flag("--probe", probe,
               "with --target: ask the target's real backend instead of the profile (it runs the model, compared "
               "with onnxruntime element by element); exit 2 when the backend is not installed");
  app.add_option("--allow", allow,
                 "with --target and --probe: FACT (as check --target names it, e.g. \"lacks Shape\"): run the "
                 "target's plan with only that fact allowed, then the backend: exit 0 when it refuses or differs (the "
                 "fact is real), 1 when it runs and matches (the fact is false) or when no model isolates the fact");
  opset->excludes(profile);
  app.add_flag("--json", json, "machine-readable report on stdout");
  app.add_option("model", input, "the model")->required();
  if (auto code = ParseArguments(app, "check", args)) return *code;
  if (!allow.empty()) {
    if (!probe || target_name.empty()) return UsageError("check", "--allow needs --target NAME and --probe");
    auto compiled = target::LoadTarget(target_name);
    if (!compiled.ok()) return UsageError("check", OneLine(std::string(compiled.status().message())));
    return ProbeFact(*compiled, input, input_shapes, allow, json);
  }
  if (!target_name.empty()) return CmdCheckTarget(target_name, input, input_shapes, json, probe);
  if (probe) return UsageError("check", "--probe needs --target NAME");
  if (opset->count() == 0) return UsageError("check", "--opset N or --target NAME is required");
  if (target < 7 || target > opset::LatestOpset("")) {
    return UsageError("check", absl::StrCat("--opset must be 7..", opset::LatestOpset("")));
  }
  auto model = LoadModel(input);
  if (!model.ok()) return ModelError(model.status());
  auto report = opset::CheckOpsetConversion(**model, target);
  if (!report.ok()) return ModelError(report.status());
  if (json) {
    Json blockers = Json::array();
    for (const auto& b : report->blockers) {
      blockers.push_back(
          {{"node", b.node}, {"op", b.op}, {"where", b.where}, {"from", b.from}, {"to", b.to}, {"why", b.why}});
    }
    Json j;
    j["model"] = input;
    j["opset"] = report->source;
    j["target"] = target;
    j["convertible"] = report->blockers.empty();
    j["blockers"] = blockers;
    j["steps"] = Json(report->counts);
    std::cout << DumpJson(j);
  } else if (report->blockers.empty()) {
    std::cout << input << ": opset " << report->source << " -> " << target << ": convertible\n";
  } else {
    std::cout << input << ": opset " << report->source << " -> " << target << ": " << report->blockers.size()
              << " node(s) block the conversion\n";
    for (const auto& b : report->blockers) std::cout << "  " << b.Describe() << "\n";
  }
  return report->blockers.empty() ? kOk : kModelError;
}

}  // namespace onnxsurgeon::cli
