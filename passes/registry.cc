// AllPasses(): the table of passes/passes.def, in its order.
#include "passes/registry.h"

#include "core/pass/fixed_point.h"
#include "passes/lowering/scatternd.h"  // defaults the table names

namespace onnxsurgeon {

const std::vector<PassInfo>& AllPasses() {
  using namespace passes;  // the factories and pipelines the table names
  static const std::vector<PassInfo> table = {
#define PASS(NAME, FACTORY, SUMMARY, ...) PassInfo{NAME, SUMMARY, {__VA_ARGS__}, &FACTORY, nullptr},
#define PIPELINE_PASS(NAME, FACTORY, PIPELINE, SUMMARY, ...) \
  PassInfo{NAME, SUMMARY, {__VA_ARGS__}, &FACTORY, &PIPELINE()},
#include "passes/passes.def"
  };
  return table;
}

}  // namespace onnxsurgeon
