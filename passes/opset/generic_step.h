// The converter's schema-derived step (converter.h, step 3): what moving a node from one
// version of its op to the next needs, read from the two schemas alone. Internal to
// passes/opset.
#pragma once

#include <cstdint>

#include "core/ir/node.h"
#include "core/ir/status.h"
#include "onnx/defs/schema.h"
#include "passes/opset/step.h"

namespace onnxsurgeon::opset {

// Given a step (node, from and to schemas) whose adapter, if any, did not handle it.
// Execute matches inputs and attributes by name: an attribute that became an input turns
// into a constant, a constant input that became an attribute into one; attributes and
// optional inputs the other version lacks must be absent or at their default; a default
// that changed is written explicitly. Result an error (via ctx.Refuse) when the step
// cannot be done exactly.
Status GenericStep(StepContext& ctx);

// The node's actual types must be allowed by the target schema; arity and attributes
// must fit it.
Status CheckAtTarget(const Node& n, const onnx::OpSchema& s, const TypeFacts& types, int64_t opset);

}  // namespace onnxsurgeon::opset
