// Partial golden check (the `--- contains` section), in the spirit of MLIR's FileCheck:
// the expected text is a model whose graph lists only the nodes that show the point, and
// the result must contain them. What is compared:
//   - ir_version, opset imports and the graph's inputs and outputs: exactly;
//   - every expected node matches a distinct result node with the same domain, op type,
//     attributes and input/output arity;
//   - graph input and output names are themselves; every other name is a placeholder that
//     binds to one result value, the same one wherever it appears (one-to-one);
//   - a placeholder declared as an initializer binds to a result initializer of the same
//     type, shape and values. Undeclared placeholders bind to any value.
// Nodes the expected text leaves out are not checked (use `--- absent` for those).
#pragma once

#include <string>

#include "onnx/onnx_pb.h"

namespace onnxsurgeon::testing {

// Empty when `have` contains `want`; otherwise why not, for the test's failure message.
std::string ContainsSubgraph(const onnx::ModelProto& have, const onnx::ModelProto& want);

}  // namespace onnxsurgeon::testing
