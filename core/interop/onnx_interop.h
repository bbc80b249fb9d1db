// Bridges to onnx's own C++ library: the text format, the checker and shape inference.
// Each converts through ModelProto, so it costs a copy of the model; use it in tests,
// --verify-each and reports, not inside a pass's inner loop.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/ir/model.h"
#include "core/ir/status.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

// ONNX text format, e.g. `<ir_version: 10, opset_import: ["" : 18]> g (float[N] X) => (float[N] Y) { Y = Relu(X) }`.
StatusOr<std::unique_ptr<Model>> ParseModelText(std::string_view text);
std::string PrintModelText(const Model& model);
std::string PrintGraphText(const Graph& graph);

// onnx::checker::check_model (full_check also runs strict shape inference).
Status CheckModel(const Model& model, bool full_check = true);

// Runs onnx shape inference and records every inferred type on values that had none
// (as value_info entries). Result the number of values that gained a type.
// Main-graph initializers over `max_value_bytes` (when >= 0) go to inference as type and
// dims only: their values never decide a shape, and copying them would dominate the cost
// on a large model.
StatusOr<int> InferShapes(Model& model, bool data_propagation = true, int64_t max_value_bytes = -1);

// Canonical comparison for golden tests: both printed after a round trip through proto.
bool ModelsEqual(const onnx::ModelProto& a, const onnx::ModelProto& b);

}  // namespace onnxsurgeon
