// The table of passes/passes.def, in its order, installed as core's AllPasses(), with the opset
// converter's dry run on convert-opset's entry (check --target asks it through the table:
// passes/targeting does not link the converter).
#include "passes/registry.h"

#include "core/pass/fixed_point.h"
#include "passes/control_flow_defaults.h"  // defaults the table names
#include "passes/lowering/scatternd.h"

namespace onnxsurgeon::passes {

const std::vector<PassInfo>& BuiltinPassTable() {
  static const std::vector<PassInfo> table = [] {
    std::vector<PassInfo> t = {
#define PASS(NAME, FACTORY, SUMMARY, ...) PassInfo{NAME, SUMMARY, {__VA_ARGS__}, &FACTORY, nullptr},
#define PIPELINE_PASS(NAME, FACTORY, PIPELINE, SUMMARY, ...) \
  PassInfo{NAME, SUMMARY, {__VA_ARGS__}, &FACTORY, &PIPELINE()},
#include "passes/passes.def"
    };
    for (PassInfo& p : t)
      if (p.name == "convert-opset")
        p.dry_run = [](const Model& model, const PassOptions& o) {
          return UnconvertibleOpsetNodes(model, o.Int("opset"));
        };
    return t;
  }();
  return table;
}

void InstallBuiltinPasses() { SetBuiltinPasses(BuiltinPassTable()); }

}  // namespace onnxsurgeon::passes
