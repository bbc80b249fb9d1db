// onnxsurgeon passes [--json]: every pass with its summary and options.
#include <iostream>

#include "cli/common.h"
#include "core/inspect/json.h"
#include "core/pass/pass.h"

namespace onnxsurgeon::cli {

int RunPasses(const std::vector<std::string>& args) {
  CLI::App app{"Every pass, its summary and its options (the first is the primary, set by name=value).",
               "onnxsurgeon passes"};
  bool json = false;
  app.add_flag("--json", json, "machine-readable list on stdout");
  if (auto code = ParseArguments(app, "passes", args)) return *code;
  if (json) {
    Json passes = Json::array();
    for (const PassInfo& p : AllPasses()) {
      Json options = Json::array();
      for (const auto& o : p.options) options.push_back({{"name", o.name}, {"default", o.default_value}, {"help", o.help}});
      passes.push_back({{"name", p.name}, {"summary", p.summary}, {"options", options}});
    }
    std::cout << DumpJson(passes, 2);
    return kOk;
  }
  for (const PassInfo& p : AllPasses()) {
    std::cout << p.name << "\n    " << p.summary << "\n";
    for (size_t i = 0; i < p.options.size(); ++i) {
      const auto& o = p.options[i];
      std::cout << "    " << (i == 0 ? "[primary] " : "") << o.name << " (default: "
                << (o.default_value.empty() ? "none" : o.default_value) << "): " << o.help << "\n";
    }
  }
  return kOk;
}

}  // namespace onnxsurgeon::cli
