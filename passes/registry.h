// The factories of the passes in passes/passes.def (the one list of passes), declared
// from that table; each pass's own file defines its factory.
#pragma once

#include <memory>
#include <vector>

#include "core/pass/pass.h"

namespace onnxsurgeon::passes {

#define PASS(NAME, FACTORY, SUMMARY, ...) StatusOr<std::unique_ptr<Pass>> FACTORY(const PassOptions& options);
#define PIPELINE_PASS(NAME, FACTORY, PIPELINE, SUMMARY, ...) \
  const FixedPointPipeline& PIPELINE();                      \
  StatusOr<std::unique_ptr<Pass>> FACTORY(const PassOptions& options);
#include "passes/passes.def"

// The table of every pass above, in passes.def's order.
const std::vector<PassInfo>& BuiltinPassTable();
// Makes core's AllPasses()/FindPass() see that table. Every program calls it once at start
// (the CLI's main, the Python module, the test and fuzz mains): core does not link the
// passes library, so it cannot reach the table itself. convert-opset's entry carries the
// opset converter's dry run (PassInfo::dry_run), which check --target asks.
void InstallBuiltinPasses();
// The opset converter's dry run (passes/opset/converter.cc): the nodes a conversion of the
// model to `opset` cannot convert, and why; none when the conversion itself fails early.
std::vector<UnconvertibleNode> UnconvertibleOpsetNodes(const Model& model, int64_t opset);

}  // namespace onnxsurgeon::passes
