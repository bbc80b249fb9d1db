// What unroll-loop decides, for the pass and for the `--target` planner asking whether it
// removes a Loop (passes/targeting/plan_steps.cc).
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/node.h"
#include "passes/control_flow_defaults.h"

namespace onnxsurgeon::passes::control_flow {

// "" when unroll-loop unrolls the Loop `node` within the bounds; else why it refuses.
std::string WhyLoopStays(const Node& node, int64_t max_trips, int64_t max_nodes);

}  // namespace onnxsurgeon::passes::control_flow
