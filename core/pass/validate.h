// Output validation: what the pass manager checks after a pipeline, so that a successful
// run never hands back a model onnx's checker would refuse (docs/reliability.md).
//
//   kStructural  our own linear-time checks of what passes can break: every input
//                defined in its scope, graph outputs defined and listed once, names defined once, an opset import for
//                every domain, node arity and attribute types against the op's schema, initializer data types and
//                payload sizes, tensor types with an element type. Costs a small fraction of saving the model.
//   kFull        kStructural, then onnx's checker with full_check (strict shape
//                inference). A failure counts only if the input passed the same check.
#pragma once

#include <string>

#include "core/ir/model.h"
#include "core/ir/status.h"

namespace onnxsurgeon {

enum class OutputValidation { kNone, kStructural, kFull };

// Given a model. Execute runs the structural checks above over every graph, subgraph and
// function body. Result OK, or an error naming the graph, node or value and what is wrong.
Status ValidateStructure(const Model& model);

// Given a model. Execute runs onnx's checker with full_check on an export in which every
// large initializer whose payload size ValidateStructure would accept stands as an
// in-memory external reference (onnx skips file checks for locations starting with '#'):
// the checker then costs a pass over the graph, not a copy of the weights.
// Result the checker's verdict.
Status CheckModelWithOnnx(const Model& model);

// Given a model with subgraphs. Execute onnx's strict shape inference with data
// propagation on a copy whose values are named apart across scopes (InferredCopy). What
// the checker runs has no data propagation, so shapes computed in one If branch that
// disagree with another place reading them pass it; this sees computed shapes too.
// Result OK for a model without subgraphs; else the verdict.
Status CheckShapesAcrossScopes(const Model& model);

// Given a model file. Execute loads it and runs onnx's full checker (for
// PassManagerOptions::check_input: the CLI asks the file, not a kept copy).
// Result the checker's verdict (a load error counts as a failure).
Status CheckModelFile(const std::string& path);

}  // namespace onnxsurgeon
