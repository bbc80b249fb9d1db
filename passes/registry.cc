// The table of passes/passes.def, in its order, installed as core's AllPasses(); and the opset
// converter's dry run, installed for check --target (passes/targeting does not link it).
#include "passes/registry.h"

#include "core/pass/fixed_point.h"
#include "passes/control_flow_defaults.h"  // defaults the table names
#include "passes/lowering/scatternd.h"

namespace onnxsurgeon::passes {

const std::vector<PassInfo>& BuiltinPassTable() {
  static const std::vector<PassInfo> table = {
#define PASS(NAME, FACTORY, SUMMARY, ...) PassInfo{NAME, SUMMARY, {__VA_ARGS__}, &FACTORY, nullptr},
#define PIPELINE_PASS(NAME, FACTORY, PIPELINE, SUMMARY, ...) \
  PassInfo{NAME, SUMMARY, {__VA_ARGS__}, &FACTORY, &PIPELINE()},
#include "passes/passes.def"
  };
  return table;
}

void InstallBuiltinPasses() {
  SetBuiltinPasses(BuiltinPassTable());
  SetOpsetConversionCheck(&UnconvertibleOpsetNodes);
}

}  // namespace onnxsurgeon::passes
