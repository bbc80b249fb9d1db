// What if-to-where decides, for the pass and for the `--target` planner asking whether it
// removes an If (passes/targeting/plan_steps.cc).
#pragma once

#include <cstdint>
#include <string>

#include "core/analysis/type_facts.h"
#include "core/ir/node.h"
#include "passes/control_flow_defaults.h"

namespace onnxsurgeon::passes::control_flow {

// "" when if-to-where converts the If `node` (with `max_nodes`); else why it refuses.
std::string WhyIfStays(const Node& node, const TypeFacts& types, int64_t max_nodes);

}  // namespace onnxsurgeon::passes::control_flow
