// onnxsurgeon passes [--json | --markdown]: every pass with its summary and options, as
// the pass table (passes/passes.def) declares them (core/pass/listing.h).
#include <iostream>

#include "cli/common.h"
#include "core/pass/listing.h"
#include "core/pass/pass.h"

namespace onnxsurgeon::cli {

int RunPasses(const std::vector<std::string>& args) {
  CLI::App app{"Every pass, its summary and its options (the first is the primary, set by name=value).",
               "onnxsurgeon passes"};
  bool json = false, markdown = false;
  auto* json_flag = app.add_flag("--json", json, "machine-readable list on stdout");
  app.add_flag("--markdown", markdown, "the reference table of docs/passes.md (scripts/update-docs.py)")
      ->excludes(json_flag);
  if (auto code = ParseArguments(app, "passes", args)) return *code;
  std::vector<const PassInfo*> passes;
  for (const PassInfo& p : AllPasses()) passes.push_back(&p);
  if (json) {
    std::cout << DumpJson(PassListJson(passes), 2);
  } else if (markdown) {
    std::cout << PassReferenceMarkdown(passes);
  } else {
    std::cout << PassListText(passes);
  }
  return kOk;
}

}  // namespace onnxsurgeon::cli
