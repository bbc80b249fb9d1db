// The `--target` planner: makes a model what a target profile accepts, in one command.
//
// It is driven by `check --target` (check.h): each blocker names the step that removes it
// (convert-opset, decompose-layernorm, rewrite-gelu, rewrite-erf, rewrite-reciprocal,
// lower-scatternd-reduction, split-grouped-convtranspose, loop-carry-outer-values,
// rewrite-index-put, inline-functions, set-input-shape + simplify, infer-shapes,
// inline-weights, prune-opset-imports, lower-ir-version). The planner runs the steps the
// blockers ask for, in one fixed order (the PLAN_STEP rows of passes/passes.def, whose
// REPEAT column says which may run again), checks again, and repeats while a
// round still changes something (a step can expose the next blocker: converting below
// opset 20 turns Gelu into Erf, which rewrite-erf then lowers on an Erf-less target;
// static shapes let simplify fold If nodes whose condition was shape arithmetic). Steps
// run through the pass manager with the pipeline's forbidden ops (core/pass/pass.h), so a
// fusion never brings back what a decomposition removed, and user passes given with
// --pass run first in the same pipeline. A model nothing blocks is left untouched.
// When blockers remain that no step removes, the planner fails naming each one (the CLI
// then writes nothing): `--target` never writes a model `check --target` rejects.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/pass/pass_manager.h"
#include "passes/targeting/check.h"

namespace onnxsurgeon::target {

struct TargetOptions {
  std::string input_shapes;             // set-input-shape's shapes= text: NAME:DIMS;NAME:DIMS
  bool allow_remaining = false;         // keep the result although blockers remain (they are reported)
  std::set<std::string> allowed_facts;  // CheckOptions::allowed_facts: not blockers, no step runs for them
};

struct TargetRun {
  std::vector<std::string> plan;  // the pipeline text of every step run, in order
  std::vector<PassRunReport> reports;
  CheckReport remaining;  // what still blocks (empty unless allow_remaining)
};

// Given a model, a profile and options. Execute plans and runs the steps. Result the plan
// and reports; an error naming every remaining blocker (the model may be partly rewritten:
// callers write nothing then).
StatusOr<TargetRun> RunTarget(Model& model, const CompiledProfile& target, const TargetOptions& options,
                              const PassManagerOptions& pm = {});

// What an --input-shapes text tells check: the inputs it names, and the dim 0 it gives each.
CheckOptions CheckOptionsFor(const std::string& input_shapes);

}  // namespace onnxsurgeon::target
