// What unroll-scan decides, for the pass and for the `--target` planner asking whether it
// removes a Scan (passes/targeting/plan_steps.cc).
#pragma once

#include <cstdint>
#include <string>

#include "core/analysis/type_facts.h"
#include "core/ir/node.h"
#include "passes/control_flow_defaults.h"

namespace onnxsurgeon::passes::control_flow {

// "" when unroll-scan unrolls the Scan `node` within the bounds; else why it refuses, with
// `length_unknown` (when given) set when that is a rank, length or batch not known statically
// (which static input shapes may make known).
std::string WhyScanStays(const Node& node, const TypeFacts& types, int64_t max_steps, int64_t max_nodes,
                         bool* length_unknown = nullptr);

}  // namespace onnxsurgeon::passes::control_flow
