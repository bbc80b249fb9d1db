// The table of passes/passes.def, in its order, installed as core's AllPasses().
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

void InstallBuiltinPasses() { SetBuiltinPasses(BuiltinPassTable()); }

}  // namespace onnxsurgeon::passes
