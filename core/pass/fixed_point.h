// A pass that is a declared pipeline of other passes, repeated to a fixed point (onnx_ir's
// PassManager(steps, early_stop=True)): each round runs the steps in order, and rounds stop
// after one in which no step changed anything, or after max_rounds. One declaration is
// what the pass runs, what its skip= option accepts, what `onnxsurgeon passes` and
// docs/passes.md list, and what its report counts (`step/what` per step, `rounds`).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/ir/status.h"
#include "core/pass/pass.h"

namespace onnxsurgeon {

struct FixedPointPipeline {
  // Pipeline items in the grammar of core/pass/pipeline.h, one pass each:
  // "fix-layernorm(to=native,custom-ops=false)". Parsed when the pass is made.
  std::vector<std::string> steps;
  int64_t max_rounds = 10;  // the default of the pass's max-rounds option
  // Run before every round (null: nothing); its result is how many things it changed that
  // the saved model shows (counted as `before-round`, and a change of the pass). simplify
  // re-infers the types the graph's rewrites made stale, declared ones included, so a
  // round that changes nothing is a true fixed point. An error leaves the round to run.
  StatusOr<int> (*before_round)(Model&) = nullptr;

  // The steps' pass names ("fix-layernorm"), in order.
  std::vector<std::string> StepNames() const;
  // "a, b(x=1), c": the steps as one line, for listings.
  std::string StepsText() const;
};

struct FixedPointRun {
  int64_t max_rounds = 0;
  std::vector<std::string> skip;  // step names left out (each must be a step)
  // Options set on a step, over the ones its declaration writes: {"fold-constants", {{"max-size", "64"}}}.
  std::map<std::string, std::map<std::string, std::string>> step_options;
};

// Given a declaration and how to run it. Execute parses and makes every step that is not
// skipped. Result the pass, or an error naming the step (a build without one of the step
// passes fails here with "unknown pass").
StatusOr<std::unique_ptr<Pass>> MakeFixedPointPass(const FixedPointPipeline& pipeline, const FixedPointRun& run);

}  // namespace onnxsurgeon
