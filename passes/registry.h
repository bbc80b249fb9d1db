// The factories of the passes in passes/passes.def (the one list of passes), declared
// from that table; each pass's own file defines its factory.
#pragma once

#include <memory>

#include "core/pass/pass.h"

namespace onnxsurgeon::passes {

#define PASS(NAME, FACTORY, SUMMARY, ...) StatusOr<std::unique_ptr<Pass>> FACTORY(const PassOptions& options);
#define PIPELINE_PASS(NAME, FACTORY, PIPELINE, SUMMARY, ...) \
  const FixedPointPipeline& PIPELINE();                      \
  StatusOr<std::unique_ptr<Pass>> FACTORY(const PassOptions& options);
#include "passes/passes.def"

}  // namespace onnxsurgeon::passes
