// What slice-step-to-gather decides, for the pass and for the step-not-one condition's
// remedy (passes/targeting/conditions/step_not_one.cc).
#pragma once

#include <string>

#include "core/ir/node.h"

namespace onnxsurgeon::passes {

// "" when slice-step-to-gather writes the Slice `node`'s steps as Gathers; else why not
// (from the node's declared types: the planner annotates shapes before it asks again).
std::string WhySliceStepsStay(const Node& node);

// "" when every step of the Slice `node` other than 1 is -1 over a whole static axis (a
// reversal x[::-1]); else its steps, and why (for the step-not-one-except-reversal
// condition: pnnx converts such a reversal, not other steps).
std::string SliceStepsBeyondReversal(const Node& node);

}  // namespace onnxsurgeon::passes
